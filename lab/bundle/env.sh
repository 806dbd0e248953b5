# The environment of an unpacked offline bundle (docs/offline-bundle.md). unpack.sh writes
# DIR/env.sh, which sets VLLM_TUNER_BUNDLE=DIR and sources this file:  source DIR/env.sh
# Puts the bundle's Node, toolchain, Pulumi plugin cache and (when carried) vLLM tree in place.
if [ -z "${VLLM_TUNER_BUNDLE:-}" ]; then
  echo "env.sh: VLLM_TUNER_BUNDLE is not set; source the DIR/env.sh that unpack.sh wrote" >&2
  return 1 2>/dev/null || exit 1
fi
export VLLM_LAB_HOME="$VLLM_TUNER_BUNDLE"             # common/tools.ts: the toolchain is $VLLM_LAB_HOME/bin
export PULUMI_HOME="$VLLM_TUNER_BUNDLE/pulumi-home"    # plugins/resource-kubernetes-v* (unpack.sh installs them)
export PULUMI_SKIP_UPDATE_CHECK=true
# ts-node without type checking: the bundle's node_modules carries no *.d.ts (trim-node-modules.sh).
export PULUMI_NODEJS_TRANSPILE_ONLY=true
export PATH="$VLLM_TUNER_BUNDLE/shim:$VLLM_TUNER_BUNDLE/node/bin:$VLLM_TUNER_BUNDLE/bin:$PATH"
if [ -d "$VLLM_TUNER_BUNDLE/python/vllm" ]; then
  # The carried vLLM tree on top of the host's torch and transformers. No flashinfer is carried, so
  # its sampler stays off (its unguarded import would end the start); nothing may reach the network.
  export PYTHONPATH="$VLLM_TUNER_BUNDLE/python${PYTHONPATH:+:$PYTHONPATH}"
  export VLLM_USE_FLASHINFER_SAMPLER=0 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 VLLM_NO_USAGE_STATS=1 DO_NOT_TRACK=1
  export PYTHONUNBUFFERED=1
fi
# The carried model directory, when there is exactly one (lab:up --model-dir "$VLLM_TUNER_MODEL_DIR").
for _m in "$VLLM_TUNER_BUNDLE"/models/*/config.json; do
  [ -f "$_m" ] && [ -z "${_model_seen:-}" ] && export VLLM_TUNER_MODEL_DIR="${_m%/config.json}" && _model_seen=1
done
unset _m _model_seen
