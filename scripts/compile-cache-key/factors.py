#!/usr/bin/env python3
"""What vLLM's own code makes of a keyed stack's container, per API key, on CPU.

Input: render-inputs.ts's JSON (the rendered args, env and Secret files, once per key).
For each key, in a fresh process with exactly the rendered env, it runs vLLM 0.24's
`vllm.envs.compile_factors()` and `vllm.config.utils.hash_factors()`: the env part of the
compile cache's key and the raw factors vLLM writes into cache_key_factors.json on the claim.
It also runs vLLM's `FlexibleArgumentParser.load_config_file()` on the rendered config file (what
`--config` adds to the args), reads from vLLM's source whether `api_key` is an `EngineArgs` field
(the engine config, hashed as `config_hash`, is built from those), and runs vLLM's logger with
the rendered logging config to see which of two INFO lines it prints.

The vLLM tree is a vllm wheel (`pip download vllm==0.24.0 --no-deps`) or a directory holding
`vllm/`. Only modules that need no GPU are imported, with their packages' `__init__` skipped
(those import torch's CUDA parts). `vllm.config.utils` imports torch for one isinstance check on
dtypes; without torch installed a stand-in module holding only a `dtype` class is used, and the
output says so (no env value is a dtype). Needs Python >= 3.10 with pydantic, pyyaml, regex.

  python3 scripts/compile-cache-key/factors.py --vllm vllm-0.24.0-...whl inputs.json > factors.json
"""

import argparse
import ast
import json
import os
import shutil
import subprocess
import sys
import tempfile
import types
import zipfile

API_UTILS_LOGGER = "vllm.entrypoints.serve.utils.api_utils"
ENGINE_LOGGER = "vllm.v1.engine.core"


def import_vllm(root: str) -> str:
    """Makes `vllm.*` importable from `root` without running the heavy package __init__s."""
    sys.path.insert(0, root)
    for name in ("vllm", "vllm.config", "vllm.utils", "vllm.logging_utils"):
        module = types.ModuleType(name)
        module.__path__ = [os.path.join(root, *name.split("."))]
        sys.modules[name] = module
        parent, _, child = name.rpartition(".")
        if parent:
            setattr(sys.modules[parent], child, module)
    try:
        import torch  # noqa: F401

        return "torch " + torch.__version__
    except ImportError:
        stand_in = types.ModuleType("torch")
        stand_in.dtype = type("dtype", (), {})
        sys.modules["torch"] = stand_in
        return "stand-in (torch not installed; used only for isinstance(x, torch.dtype))"


def formatter_module(root: str) -> None:
    """vllm.logging_utils' __init__ imports torch tensors; the formatter it exports does not."""
    import importlib

    package = sys.modules["vllm.logging_utils"]
    formatter = importlib.import_module("vllm.logging_utils.formatter")
    package.NewLineFormatter = formatter.NewLineFormatter
    package.ColoredFormatter = formatter.ColoredFormatter


def child_factors(root: str, case_file: str) -> None:
    """Runs in a process whose env is exactly the container's (plus where the files are)."""
    case = json.load(open(case_file))
    torch_note = import_vllm(root)
    formatter_module(root)
    import vllm.envs as envs
    from vllm.config.utils import hash_factors
    from vllm.utils.argparse_utils import FlexibleArgumentParser

    config_args = FlexibleArgumentParser().load_config_file(case["hostFiles"]["config"])
    # Exactly the rendered env from here on: compile_factors() reads os.environ at call time.
    os.environ.clear()
    os.environ.update(case["env"])
    factors = envs.compile_factors()
    json.dump(
        {
            "envFactors": factors,
            "envHash": hash_factors(factors),
            "configFileFlags": config_args[0::2],
            "configFileGivesApiKey": config_args == ["--api-key", case["apiKey"]],
            "torch": torch_note,
        },
        # Not stdout: vLLM's logger writes there.
        open(case_file + ".out", "w"),
    )


def child_log(root: str, logging_config: str) -> None:
    """Two INFO lines through vLLM's logger: `non-default args` (api_utils) and an engine line."""
    if logging_config:
        os.environ["VLLM_LOGGING_CONFIG_PATH"] = logging_config
    import_vllm(root)
    formatter_module(root)
    from vllm.logger import init_logger

    init_logger(API_UTILS_LOGGER).info("non-default args: %s", {"api_key": ["(the key)"]})
    init_logger(ENGINE_LOGGER).info("Initializing a V1 LLM engine (v0.24.0) with config: ...")


def run_child(root: str, mode: str, arg: str, env: dict) -> str:
    out = subprocess.run(
        [sys.executable, __file__, "--vllm", root, f"--{mode}", arg],
        env=env,
        capture_output=True,
        text=True,
    )
    if out.returncode != 0:
        raise SystemExit(f"{mode} failed (exit code {out.returncode}):\n{out.stderr}")
    return out.stdout


def class_fields(source: str, class_name: str) -> list:
    """Annotated attributes of a class in vLLM's source, read without importing it."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ClassDef) and node.name == class_name:
            return [s.target.id for s in node.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)]
    raise SystemExit(f"no class {class_name}")


def without_time(line: str) -> str:
    """`INFO 12-03 08:00:01 [file.py:12] msg` without its date and time."""
    parts = line.split(" ", 3)
    return " ".join([parts[0], parts[3]]) if len(parts) == 4 else line


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--vllm", required=True, help="vllm wheel, or a directory holding vllm/")
    parser.add_argument("--child-factors")
    parser.add_argument("--child-log")
    parser.add_argument("inputs", nargs="?")
    a = parser.parse_args()
    if a.child_factors:
        return child_factors(a.vllm, a.child_factors)
    if a.child_log is not None:
        return child_log(a.vllm, a.child_log)

    work = tempfile.mkdtemp(prefix="vllm-factors-")
    root = a.vllm
    if zipfile.is_zipfile(root):
        # Only what the checks import: vllm's Python files.
        with zipfile.ZipFile(root) as wheel:
            wheel.extractall(work, [n for n in wheel.namelist() if n.startswith("vllm/") and n.endswith(".py")])
        root = work
    version = {}
    exec(open(os.path.join(root, "vllm", "_version.py")).read(), version)
    inputs = json.load(open(a.inputs))
    base_env = {"PATH": os.environ.get("PATH", ""), "PYTHONDONTWRITEBYTECODE": "1"}
    cases = []
    for i, case in enumerate(inputs["cases"]):
        host = {}
        for path, text in case["files"].items():
            host[os.path.basename(path)] = os.path.join(work, f"case{i}", os.path.basename(path))
            os.makedirs(os.path.dirname(host[os.path.basename(path)]), exist_ok=True)
            with open(host[os.path.basename(path)], "w") as f:
                f.write(text)
        child_case = os.path.join(work, f"case{i}.json")
        json.dump({"apiKey": case["apiKey"], "env": case["env"], "hostFiles": {"config": host["config.yaml"]}}, open(child_case, "w"))
        # The child's own interpreter needs PATH; the logging config must exist for vllm.logger to import.
        env = {**base_env, **case["env"], "VLLM_LOGGING_CONFIG_PATH": host["logging.json"]}
        run_child(root, "child-factors", child_case, env)
        result = json.load(open(child_case + ".out"))
        cases.append({"apiKey": case["apiKey"], "argv": case["args"], "env": case["env"], **result})
    logging_json = os.path.join(work, "case0", "logging.json")
    log_lines = {
        label: [without_time(l) for l in run_child(root, "child-log", path, base_env).splitlines()]
        for label, path in (("vllmDefault", ""), ("rendered", logging_json))
    }
    engine_args = class_fields(open(os.path.join(root, "vllm/engine/arg_utils.py")).read(), "EngineArgs")
    frontend_args = class_fields(open(os.path.join(root, "vllm/entrypoints/openai/cli_args.py")).read(), "FrontendArgs")
    json.dump(
        {
            "vllmVersion": version["__version__"],
            "stack": inputs["stack"],
            "compileCache": inputs["compileCache"],
            "cases": cases,
            "apiKeyIsEngineArg": "api_key" in engine_args,
            "apiKeyIsFrontendArg": "api_key" in frontend_args,
            "logLines": log_lines,
        },
        sys.stdout,
        indent=2,
        sort_keys=True,
    )
    sys.stdout.write("\n")
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
