# Sourced by bench.sh and campaign.sh: the checks and the run directory both need on the GPU host.
# host_run_setup NAME: requires `source DIR/env.sh`, sets MODEL_DIR (a model with config.json) and
# RUN (a fresh run directory with no old campaign.rc).
host_run_setup() {
  local name=$1
  [[ -n "${VLLM_TUNER_BUNDLE:-}" ]] || { echo "$name: source DIR/env.sh first (unpack.sh prints it)" >&2; exit 2; }
  MODEL_DIR="${MODEL_DIR:-${VLLM_TUNER_MODEL_DIR:-}}"
  [[ -f "$MODEL_DIR/config.json" ]] || { echo "$name: MODEL_DIR '$MODEL_DIR' has no config.json (bundle --with-model DIR)" >&2; exit 2; }
  RUN="${RUN_DIR:-$VLLM_TUNER_BUNDLE/run}"
  mkdir -p "$RUN"
  rm -f "$RUN/campaign.rc"
}
