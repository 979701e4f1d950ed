"""Do the project's parts agree? The kernel entry, the launch that calls it, the binding that calls
the launcher and ModelNew's call of the binding must name the same things with the same numbers of
arguments (ascendc-signature), and the operator must be built for the types and target opforge
verifies (ascendc-dtype, ascendc-target); tiling_rules.py checks that every tiling field is set on
the host and read in the kernel (ascendc-tiling). A mismatch here is a build error or a silent wrong
answer on the NPU, and this is the only place it can be caught before CANN.
"""
from __future__ import annotations

from opforge.backends.ascendc import api
from opforge.backends.ascendc.kernel_rules import Findings, calls, open_paren, split_args
from opforge.backends.ascendc.project import MKB_MODULE, snake
from opforge.backends.cuda.cxx import Token


def _launches(code):
    """(host function, kernel name, config args, call args, where) of every `k<<<...>>>(...)` and of every
    `ACLRT_LAUNCH_KERNEL(k)(blockDim, stream, args...)` (Huawei's kernel-invocation form; its config is
    given as <<<blockDim, nullptr, stream>>>'s three)."""
    for f in code.functions:
        if f.aicore:
            continue
        body, unit = f.body, code.units[f.unit]
        for k, t in enumerate(body):
            if t.text == "ACLRT_LAUNCH_KERNEL" and k + 4 < len(body) and body[k + 1].text == "(" \
                    and body[k + 3].text == ")" and body[k + 4].text == "(":
                args = split_args(body, k + 4)
                config = args[:1] + [[Token("id", "nullptr", t.line)]] + args[1:2]
                yield f, body[k + 2].text, config if len(args) >= 2 else args[:2], args[2:], unit.at(t)
                continue
            if t.text != "<<<" or t.kind != "punct" or k == 0:
                continue
            j = k - 1
            if body[j].text in (">", ">>"):  # k<float><<<...>>>
                while j > 0 and body[j].text != "<":
                    j -= 1
                j -= 1
            end = next((e for e in range(k, len(body)) if body[e].text == ">>>"), None)
            if end is None or end + 1 >= len(body) or body[end + 1].text != "(":
                continue
            yield f, body[j].text, _between(body[k + 1:end]), split_args(body, end + 1), unit.at(t)


def _between(tokens):
    args, current, depth = [], [], 0
    for t in tokens:
        depth += (t.text in "([{") - (t.text in ")]}") if t.kind == "punct" else 0
        if t.text == "," and depth == 0:
            args.append(current)
            current = []
        else:
            current.append(t)
    return args + [current]


def _reaches(code, start_names: set[str], targets: set[str]) -> bool:
    """Does any host function named in start_names call (transitively) one named in targets?"""
    seen, todo = set(), list(start_names)
    while todo:
        name = todo.pop()
        if name in targets:
            return True
        if name in seen:
            continue
        seen.add(name)
        for f in code.named(name):
            todo += [api.base_name(n) for _, n, member in calls(f.body) if not member]
    return False


def _arity(code, name: str) -> int | None:
    counts = {len(f.params) for f in code.named(name) if not any(t.text in ("=", "...") for p in f.params for t in p)}
    return counts.pop() if len(counts) == 1 else None


def _bindings(code) -> dict[str, dict[str, tuple[int | None, str]]]:
    """PYBIND11_MODULE name -> {python name: (parameter count of its implementation, impl name)}."""
    modules: dict[str, dict] = {}
    for f in code.functions:
        if f.name != "PYBIND11_MODULE" or not f.params or not f.params[0]:
            continue
        defs = modules.setdefault(f.params[0][0].text, {})
        for k, name, member in calls(f.body):
            if not member or name != "def":
                continue
            args = split_args(f.body, open_paren(f.body, k))
            if len(args) < 2 or not args[0] or args[0][0].kind != "str":
                continue
            impl = [t for t in args[1] if t.text != "&"]
            if impl and impl[0].text == "[":  # a lambda: count its parameters
                close = next((i for i, t in enumerate(impl) if t.text == "("), None)
                params = split_args(impl, close) if close is not None else []
                defs[args[0][0].text[1:-1]] = (len(params), "lambda")
            elif impl and impl[0].kind == "id":
                defs[args[0][0].text[1:-1]] = (_arity(code, impl[0].text), api.base_name(impl[0].text))
    return modules


def check_direct(code, project, out: Findings) -> None:
    kernels = {api.base_name(f.name): f for f in code.kernels}
    if not kernels:
        out.bad("ascendc-signature: no kernel entry: the project defines no `__global__ __aicore__` function")
        return
    launchers = set()
    for f, name, config, args, where in _launches(code):
        launchers.add(api.base_name(f.name))
        kernel = kernels.get(api.base_name(name))
        if kernel is None:
            out.bad(f"ascendc-signature: {f.name} launches {name}, which is not a kernel of the project ({where})")
        elif len(args) != len(kernel.params):
            out.bad(f"ascendc-signature: {f.name} launches {name} with {len(args)} arguments, but {name} takes "
                    f"{len(kernel.params)} ({where})")
        if len(config) != 3:
            out.bad(f"ascendc-signature: the launch of {name} has {len(config)} values in <<<...>>>; AscendC's is "
                    f"<<<blocks, nullptr, stream>>> ({where})")
    if not launchers:
        out.bad("ascendc-signature: no launcher: no host function launches a kernel with <<<blocks, nullptr, stream>>>")
        return
    _host_arity(code, launchers, out)
    _python_calls(code, project, _bindings(code), launchers, out)


def _host_arity(code, launchers: set[str], out: Findings) -> None:
    for f in code.functions:
        if f.aicore:
            continue
        for k, name, member in calls(f.body):
            want = _arity(code, name) if api.base_name(name) in launchers and not member else None
            got = len(split_args(f.body, open_paren(f.body, k)))
            if want is not None and got != want:
                out.bad(f"ascendc-signature: {f.name} calls launcher {name} with {got} arguments, but it takes {want} "
                        f"({code.units[f.unit].at(f.body[k])})")


def _python_calls(code, project, modules: dict, launchers: set[str], out: Findings) -> None:
    if not modules:
        out.bad("ascendc-signature: no binding: the project has no PYBIND11_MODULE(<module>, m) with m.def(...)")
        return
    for module in sorted(project.modules - set(modules)):
        out.bad(f"ascendc-signature: ModelNew imports {module}, which the project does not build "
                f"(its PYBIND11_MODULE: {', '.join(sorted(modules))})")
    for call in project.calls:
        defs = modules.get(call.module, {})
        if call.fn not in defs:
            if call.module in modules:
                out.bad(f"ascendc-signature: ModelNew.forward calls {call.module}.{call.fn}, which the binding does not "
                        f"define (it defines {', '.join(sorted(defs)) or 'nothing'}) (line {call.line})")
            continue
        arity, impl = defs[call.fn]
        if arity is not None and call.nargs is not None and arity != call.nargs:
            out.bad(f"ascendc-signature: ModelNew.forward calls {call.module}.{call.fn} with {call.nargs} arguments, "
                    f"but its implementation {impl} takes {arity} (line {call.line})")
        if launchers and impl != "lambda" and not _reaches(code, {impl}, launchers):
            out.bad(f"ascendc-signature: {call.module}.{call.fn}'s implementation {impl} never reaches a kernel launch")


def check_multikernelbench(code, project, out: Findings) -> None:
    op = project.op
    name, inputs = op["op"], [d["name"] for d in op.get("input_desc", [])]
    outputs, attrs = [d["name"] for d in op["output_desc"]], op.get("attr", [])
    entry = next((f for f in code.kernels if api.base_name(f.name) == snake(name)), None)
    if entry is None:
        out.bad(f"ascendc-signature: kernel_src has no `extern \"C\" __global__ __aicore__ void {snake(name)}(...)` "
                f"for operator {name}")
    elif len(entry.params) != len(inputs) + len(outputs) + 2:
        out.bad(f"ascendc-signature: {entry.name} takes {len(entry.params)} parameters; operator {name} needs "
                f"{len(inputs) + len(outputs) + 2} ({len(inputs)} inputs, {len(outputs)} outputs, workspace, tiling) "
                f"({entry.where})")
    found = _mkb_calls(code)
    if name not in found.get("OP_ADD", []):
        out.bad(f"ascendc-signature: host_operator_src never registers {name} with OP_ADD({name})")
    for kind, names in (("Input", inputs), ("Output", outputs)):
        if found.get(kind, []) != names:
            out.bad(f"ascendc-signature: host_operator_src's {kind}s {found.get(kind, [])} differ from "
                    f"project_json_src's {names}")
    registered = found.get("REGISTER_TILING_DATA_CLASS", [])
    if registered and registered[0] != name:
        out.bad(f"ascendc-signature: REGISTER_TILING_DATA_CLASS names {registered[0]}, not the operator {name}")
    commands = found.get("EXEC_NPU_CMD", [])
    if not commands:
        out.bad(f"ascendc-signature: python_bind_src never calls EXEC_NPU_CMD(aclnn{name}, ...)")
    for command, nargs in commands:
        if command != f"aclnn{name}":
            out.bad(f"ascendc-signature: python_bind_src calls EXEC_NPU_CMD({command}, ...), not aclnn{name}")
        elif nargs != len(inputs) + len(outputs) + len(attrs):
            out.bad(f"ascendc-signature: EXEC_NPU_CMD(aclnn{name}, ...) passes {nargs} tensors/attributes; the "
                    f"operator has {len(inputs)} inputs, {len(outputs)} outputs and {len(attrs)} attributes")
    modules = {MKB_MODULE: next(iter(_bindings(code).values()), {})}
    _python_calls(code, project, modules if modules[MKB_MODULE] else {}, set(), out)


def _mkb_calls(code) -> dict:
    found: dict = {}
    for unit in code.units:
        tokens = unit.tokens
        for k, name, member in calls(tokens):
            args = split_args(tokens, open_paren(tokens, k))
            first = args[0][0] if args and args[0] else None
            if first is None:
                continue
            if name in ("OP_ADD", "REGISTER_TILING_DATA_CLASS") and first.kind == "id":
                found.setdefault(name, []).append(first.text)
            elif name in ("Input", "Output") and member and first.kind == "str":
                found.setdefault(name, []).append(first.text[1:-1])
            elif name == "EXEC_NPU_CMD" and first.kind == "id":
                found.setdefault(name, []).append((first.text, len(args) - 1))
    return found


# -- the types and target the operator is built for --------------------------------------------------

def check_types(code, project, float32_spec: bool | None, out: Findings) -> None:
    """The operator must be built for the verification: in a float32 op no input or output declared
    only as float16/bfloat16 (project_json_src's types, the OpDef's DataType lists, a GlobalTensor's
    element type), and an OpDef that lists AI-core targets must list api.TARGET."""
    if float32_spec:
        for desc in (project.op or {}).get("input_desc", []) + (project.op or {}).get("output_desc", []):
            types = desc.get("type") or []
            types = types if isinstance(types, list) else [types]
            if _low_only([str(t) for t in types]):
                out.bad(f"ascendc-dtype: project_json_src declares {desc['name']} as {', '.join(map(str, types))}, "
                        "but the spec's inputs are float32: the kernel would read and write half-width floats")
        for kind, name, types, where in _opdef_types(code):
            if _low_only(types):
                out.bad(f"ascendc-dtype: the OpDef's {kind}(\"{name}\") takes {', '.join(types)} only, but the spec's "
                        f"inputs are float32 ({where})")
        for unit in code.units:
            _global_tensors(unit.tokens, unit, out)
    targets = list(_configs(code))
    if targets and not any(a == api.TARGET for a, _ in targets):
        out.bad(f"ascendc-target: the OpDef registers the operator for {', '.join(sorted({a for a, _ in targets}))} "
                f"only (AddConfig at {targets[0][1]}); opforge verifies for {api.TARGET} (Atlas A2), where it "
                "would not be found")


def _low_only(types: list[str]) -> bool:
    names = [t.rpartition("::")[2] for t in types]
    floats = [t for t in names if t in api.LOW_FLOATS or t in api.FLOAT32]
    return bool(floats) and not any(t in api.FLOAT32 for t in floats)


def _opdef_types(code):
    """(Input|Output, name, DataType list, where) of each `this->Input("x")...DataType({...})` chain."""
    for unit in code.units:
        tokens = unit.tokens
        for k, name, member in calls(tokens):
            if not member or name not in ("Input", "Output"):
                continue
            args = split_args(tokens, open_paren(tokens, k))
            if not args or not args[0] or args[0][0].kind != "str":
                continue
            j = k
            while j < len(tokens) and tokens[j].text != ";":
                if tokens[j].text == "DataType" and j + 1 < len(tokens) and tokens[j + 1].text == "(":
                    types = [t.text for t in tokens[j + 2:closing(tokens, j + 1)] if t.kind == "id"]
                    yield name, args[0][0].text[1:-1], types, unit.at(tokens[k])
                    break
                j += 1


def closing(tokens, start: int) -> int:
    depth = 0
    for j in range(start, len(tokens)):
        depth += (tokens[j].text == "(") - (tokens[j].text == ")")
        if depth == 0:
            return j
    return len(tokens)


def _global_tensors(tokens, unit, out: Findings) -> None:
    for k in range(len(tokens) - 3):
        if tokens[k].kind == "id" and api.base_name(tokens[k].text) == "GlobalTensor" and tokens[k + 1].text == "<" \
                and tokens[k + 3].text == ">" and tokens[k + 2].text in api.LOW_FLOATS:
            out.bad(f"ascendc-dtype: GlobalTensor<{tokens[k + 2].text}> in a float32 op: the kernel reads or writes "
                    f"the spec's float32 tensors as {tokens[k + 2].text} ({unit.at(tokens[k])})")


def _configs(code):
    for unit in code.units:
        tokens = unit.tokens
        for k, name, member in calls(tokens):
            if member and name == "AddConfig":
                args = split_args(tokens, open_paren(tokens, k))
                if args and args[0] and args[0][0].kind == "str":
                    yield args[0][0].text[1:-1], unit.at(tokens[k])
