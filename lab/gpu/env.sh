# Source on the device after lab/gpu/unpack.sh:  source lab/gpu/env.sh
# Puts the carried Python tree, Node 24, the lab toolchain and Pulumi's plugin cache in place.
GPU_ROOT="${GPU_ROOT:-/tmp/gpu}"
export GPU_ROOT
export VLLM_LAB_HOME="$GPU_ROOT"                       # common/tools.ts: toolchainBin() = $GPU_ROOT/bin
export PULUMI_HOME="$GPU_ROOT/pulumi-home"            # plugins/resource-kubernetes-v* (unpack.sh installs it)
export PULUMI_SKIP_UPDATE_CHECK=true PULUMI_IGNORE_AMBIENT_PLUGINS=true
# ts-node without type checking: the payload's node_modules carries no *.d.ts (pack.sh prunes them).
export PULUMI_NODEJS_TRANSPILE_ONLY=true
export PATH="$GPU_ROOT/shim:$GPU_ROOT/node/bin:$GPU_ROOT/bin:$PATH"
export PYTHONPATH="$GPU_ROOT/site${PYTHONPATH:+:$PYTHONPATH}"
export VLLM_USE_FLASHINFER_SAMPLER=0 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 VLLM_NO_USAGE_STATS=1 DO_NOT_TRACK=1
export PYTHONUNBUFFERED=1
export VLLM_GEMMA3_DIR="$GPU_ROOT/models/gemma3"
# Keep the machine's NVLink-multicast guards (KINDS.md) also for programs started with their own env.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
