#!/usr/bin/env python3
"""Lists every top-level module a vLLM entry point lacks, in one run: imports the given modules and
runs `vllm.entrypoints.cli.main serve --help`; each ModuleNotFoundError's module is recorded and
replaced by a stub, then it tries again (a failed import leaves nothing behind in sys.modules).
Prints `MISSING: a b c` (empty when nothing is missing). Usage: missing_imports.py [MODULE...]"""
import importlib, importlib.abc, importlib.machinery, io, contextlib, sys, traceback, types

STUBS: set[str] = set()

class _Stub(types.ModuleType):
    __path__: list = []
    def __getattr__(self, name):
        if name.startswith("__"): raise AttributeError(name)
        return type(name, (), {"__init__": lambda s, *a, **k: None, "__call__": lambda s, *a, **k: None})

class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path=None, target=None):
        if fullname.split(".")[0] in STUBS:
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None
    def create_module(self, spec): return _Stub(spec.name)
    def exec_module(self, module): module.__path__ = []

sys.meta_path.append(_Finder())
targets = sys.argv[1:] or [
    "vllm", "vllm._custom_ops", "vllm.vllm_flash_attn", "vllm.v1.attention.backends.flash_attn",
    "vllm.model_executor.models.gemma3", "vllm.v1.engine.core", "vllm.v1.engine.async_llm",
    "vllm.entrypoints.openai.api_server", "vllm.entrypoints.cli.main",
]
other_errors = []
for attempt in range(25):
    try:
        for t in targets: importlib.import_module(t)
        from vllm.entrypoints.cli import main as cli
        sys.argv = ["vllm", "serve", "--help"]
        with contextlib.redirect_stdout(io.StringIO()):
            try: cli.main()
            except SystemExit as e:
                if e.code not in (0, None): raise RuntimeError(f"serve --help exited {e.code}")
        break
    except ModuleNotFoundError as e:
        top = (e.name or "?").split(".")[0]
        if top in STUBS or top == "?":
            other_errors.append(traceback.format_exc(limit=3)); break
        print(f"missing: {e.name}  (first needed by: {traceback.extract_tb(e.__traceback__)[-2].filename if len(traceback.extract_tb(e.__traceback__)) > 1 else '?'})", file=sys.stderr)
        STUBS.add(top)
    except Exception:
        other_errors.append(traceback.format_exc(limit=6)); break
for err in other_errors: print("OTHER ERROR (not a missing module):\n" + err, file=sys.stderr)
print("MISSING:", " ".join(sorted(STUBS)))
sys.exit(1 if STUBS or other_errors else 0)
