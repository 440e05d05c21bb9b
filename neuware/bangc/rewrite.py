"""BANG C to C++: the source transformation cncc applies to a preprocessed `.mlu` translation unit.

Works on g++'s preprocessed output (line markers kept, so the compiler's diagnostics name the user's file and line)
and changes only code from the user's files (not system headers nor mlusim's device headers):
- `kernel<<<dim, ktype, queue>>>(args)` becomes a call through `__mlu_launch`, which converts each argument to its
  parameter's type and calls cnrtInvokeKernel;
- `__mlu_global__` / `__mlu_entry__` definitions are registered in the object's kernel table;
- `__nram__` / `__wram__` / `__mlu_shared__` arrays become references into the running task's on-chip memory (laid
  out per launch, checked against the board's capacity);
- every loop polls the watchdog at its head;
- inline assembly whose instructions are all `sync` (the wait for the core's pending copies that Cambricon's own
  kernels spell `__asm__ volatile("sync;")`) becomes `__sync()`; any other instruction is an error naming it
  (nothing silently wrong).
Inserted text has no newlines, so every line keeps its number.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

_TOKEN = re.compile(r"""
    (?P<nl>\n)
  | (?P<ws>[ \t\r\f\v]+|\\\n)
  | (?P<str>(?:u8|u|U|L)?R"(?P<delim>[^(\s]*)\((?s:.*?)\)(?P=delim)"|(?:u8|u|U|L)?"(?:\\.|[^"\\\n])*")
  | (?P<chr>(?:u8|u|U|L)?'(?:\\.|[^'\\\n])*')
  | (?P<id>[A-Za-z_$][\w$]*)
  | (?P<num>\.?\d(?:[eEpP][+-]|[\w.']|)*)
  | (?P<punct><<<|>>>|<<=|>>=|->\*|\.\.\.|::|->|\+\+|--|<<|>>|<=|>=|==|!=|&&|\|\||[-+*/%^&|]=|\#\#|.)
""", re.VERBOSE)
_NEXT_MARKER = re.compile(r"\n#\s*(?:line\s+)?\d+\s+\"")
_LINE_MARKER = re.compile(r'#\s*(?:line\s+)?(\d+)\s+"((?:\\.|[^"\\])*)"([^\n]*)')

MEMORY_QUALIFIERS = {"__nram__": "__MLU_NRAM", "__wram__": "__MLU_WRAM", "__mlu_shared__": "__MLU_SRAM"}
KERNEL_QUALIFIERS = ("__mlu_global__", "__mlu_entry__")
BARRIERS = ("__sync_cluster", "__sync_all", "__sync_all_ipu", "__sync_all_mpu", "__sync_all_ipu_within_cluster")
_NOT_A_TYPE = {"return", "case", "sizeof", "else", "delete", "throw", "new", "goto", "co_return", "co_yield",
               "alignof", "decltype", "typeid", "not", "and", "or"}


class CompileError(Exception):
    """A BANG C construct mlusim cannot compile, with the user's file and line."""

    def __init__(self, file: str, line: int, message: str):
        super().__init__(f"{file}:{line}: error: {message}")
        self.file, self.line, self.text = file, line, message


@dataclass
class Token:
    kind: str
    text: str
    start: int
    end: int
    file: str
    line: int
    user: bool


@dataclass
class Result:
    text: str
    kernels: list = field(default_factory=list)   # names of the kernels defined or launched
    barriers: bool = False
    memory_cores: bool = False  # the code asks __is_mpu() / __is_ipu()
    core_id_checks: list = field(default_factory=list)  # (file, line) of each `coreId == 0x80` comparison
    launches: int = 0


def tokenize(source: str, user_file) -> list[Token]:
    """Significant tokens with their file/line (from line markers) and whether they come from a user file."""
    tokens: list[Token] = []
    file, line, user = "<input>", 1, True
    position, size = 0, len(source)
    at_line_start = True
    while position < size:
        if at_line_start:
            match = re.compile(r"[ \t]*#").match(source, position)
            if match:  # a directive: a line marker (or #pragma, kept as is)
                end = source.find("\n", position)
                end = size if end < 0 else end
                marker = _LINE_MARKER.match(source, match.end() - 1, end)
                if marker:
                    line = int(marker.group(1))
                    file = marker.group(2).encode().decode("unicode_escape")
                    flags = marker.group(3).split()
                    user = "3" not in flags and user_file(file)
                else:
                    line += 1
                position = end + 1
                if not user:  # nothing to rewrite in a system or mlusim header: on to the next line marker
                    following = _NEXT_MARKER.search(source, position)
                    position = following.start() + 1 if following else size
                continue
        match = _TOKEN.match(source, position)
        kind = match.lastgroup
        text = match.group()
        if kind == "nl":
            line += 1
            at_line_start = True
        elif kind == "ws":
            line += text.count("\n")
        else:
            at_line_start = False
            tokens.append(Token(kind, text, position, match.end(), file, line, user))
            if kind == "str":
                line += text.count("\n")
        position = match.end()
    return tokens


def _string_value(token: Token) -> str:
    """The characters of a plain string literal token, with its escapes resolved."""
    text = token.text
    quote = text.index('"')
    if text[:quote].endswith("R"):  # a raw string: R"delim( ... )delim"
        return text[text.index("(") + 1:text.rindex(")")]
    return text[quote + 1:-1].encode("latin-1", "backslashreplace").decode("unicode_escape")


def _matching(tokens: list[Token], index: int) -> int:
    """Index of the bracket closing tokens[index] ( ( [ { )."""
    pairs = {"(": ")", "[": "]", "{": "}"}
    opening = tokens[index].text
    closing = pairs[opening]
    depth = 0
    for i in range(index, len(tokens)):
        text = tokens[i].text
        if text == opening:
            depth += 1
        elif text == closing:
            depth -= 1
            if depth == 0:
                return i
    raise CompileError(tokens[index].file, tokens[index].line, f"unbalanced '{opening}'")


class Rewriter:
    def __init__(self, source: str, user_file):
        self.source = source
        self.tokens = tokenize(source, user_file)
        self.edits: list[tuple[int, int, str]] = []
        self.counter = 0
        self.result = Result("")
        # file-scope on-chip arrays: name -> accessor expression, replaced in later uses
        self.file_arrays: dict[str, str] = {}
        # template kernels: a launch without template arguments deduces them from its arguments
        self.template_kernels: set = set()

    def error(self, token: Token, message: str):
        raise CompileError(token.file, token.line, message)

    def edit(self, start: int, end: int, text: str) -> None:
        self.edits.append((start, end, text))

    def unique(self) -> int:
        self.counter += 1
        return self.counter

    # ---- scopes ------------------------------------------------------------------------------------------------
    def scope_kinds(self) -> list[str]:
        """For each token index, the kind of the innermost brace scope it is in: 'file' or 'func' ('other' for class
        bodies and initialisers), and which function scopes are constexpr."""
        kinds, stack = [], []
        tokens = self.tokens
        for i, token in enumerate(tokens):
            kinds.append(stack[-1] if stack else "file")
            if token.text == "{":
                stack.append(self._brace_kind(i, stack[-1] if stack else "file"))
            elif token.text == "}" and stack:
                stack.pop()
        return kinds

    def _brace_kind(self, i: int, outer: str) -> str:
        tokens = self.tokens
        if outer.startswith("func"):
            return outer
        j = i - 1
        previous = tokens[j].text if j >= 0 else ""
        back = [t.text for t in tokens[max(0, i - 4):i]]
        if "namespace" in back or (previous.startswith('"') and len(back) >= 2 and back[-2] == "extern"):
            return "file"
        if previous in (")", "const", "noexcept", "override", "final", "mutable", "volatile", "&", "&&") \
                or (tokens[j].kind == "id" and j > 0 and tokens[j - 1].text == "->"):
            # a function body: constexpr ones get no polls
            k = j
            while k >= 0 and tokens[k].text not in (";", "}", "{"):
                if tokens[k].text == "constexpr":
                    return "func-constexpr"
                k -= 1
            return "func"
        return "other"

    # ---- passes ------------------------------------------------------------------------------------------------
    def run(self) -> Result:
        tokens = self.tokens
        scopes = self.scope_kinds()
        paren_depth = 0
        do_tails: set[int] = set()
        for i, token in enumerate(tokens):
            if not token.user:
                continue
            text = token.text
            if text in ("(", "["):
                paren_depth += 1
            elif text in (")", "]"):
                paren_depth -= 1
            if token.kind != "id" and text != "<<<":
                continue
            if text in ("__asm__", "asm", "__asm"):
                self.inline_assembly(i)
            elif text in KERNEL_QUALIFIERS:
                self.kernel_definition(i)
            elif text == "__mlu_func__":
                self.device_function(i)
            elif text in MEMORY_QUALIFIERS:
                self.memory_declaration(i, scopes[i])
            elif text == "<<<":
                self.launch(i)
            elif text in BARRIERS:
                self.result.barriers = True
            elif text in ("__is_mpu", "__is_ipu"):
                self.result.memory_cores = True
            elif text == "coreId" and self._compares_to_memory_core(i):
                self.result.core_id_checks.append((token.file, token.line))
            elif text in ("for", "while", "do") and scopes[i] == "func":
                self.loop(i, do_tails)
        self.replace_file_arrays()
        return self.finish()

    def _compares_to_memory_core(self, i: int) -> bool:
        """`coreId == 0x80` / `coreId != (0x80)` (or 128): code written for the memory core without __is_mpu()."""
        after = [t.text for t in self.tokens[i + 1:i + 5] if t.text not in ("(", ")")]
        before = [t.text for t in self.tokens[max(0, i - 4):i] if t.text not in ("(", ")")]
        memory_core = ("0x80", "128", "0X80")
        return (len(after) >= 2 and after[0] in ("==", "!=") and after[1] in memory_core) or \
            (len(before) >= 2 and before[-1] in ("==", "!=") and before[-2] in memory_core)

    def finish(self) -> Result:
        out, position = [], 0
        for start, end, text in sorted(self.edits, key=lambda e: (e[0], e[1])):
            if start < position:
                continue  # an edit inside a replaced range (cannot happen for well-formed code)
            out.append(self.source[position:start])
            out.append(text)
            position = end
        out.append(self.source[position:])
        self.result.text = "".join(out)
        return self.result

    # ---- inline assembly ---------------------------------------------------------------------------------------
    def inline_assembly(self, i: int) -> None:
        """`asm [volatile] ("sync;" ...)` becomes `__sync()`; other instructions are refused, named."""
        tokens = self.tokens
        j = i + 1
        while j < len(tokens) and tokens[j].text in ("volatile", "__volatile__", "__volatile", "inline", "goto"):
            j += 1
        if j >= len(tokens) or tokens[j].text != "(":
            self.error(tokens[i], f"inline assembly ('{tokens[i].text}') is not simulated")
        close = _matching(tokens, j)
        body = tokens[j + 1:close]
        colon = next((k for k, t in enumerate(body) if t.text in (":", "::")), len(body))
        template = body[:colon]  # the instructions; operands and clobbers follow the first colon
        text = "".join(_string_value(t) for t in template if t.kind == "str")
        instructions = [part.strip() for part in re.split(r"[;\n]", text) if part.strip()]
        if instructions and all(t.kind == "str" for t in template) and all(part == "sync" for part in instructions):
            self.edit(tokens[i].start, tokens[close].end, "__sync()")
            return
        shown = "; ".join(instructions) or text
        self.error(tokens[i], f"inline assembly ('{shown}') is not simulated: mlusim runs BANG C on the host, and "
                              f"an MLU instruction other than sync cannot run there")

    # ---- kernels -----------------------------------------------------------------------------------------------
    def kernel_definition(self, i: int) -> None:
        tokens = self.tokens
        self.edit(tokens[i].start, tokens[i].end, "")
        # template kernels are registered where they are launched (each instantiation)
        k = i - 1
        while k >= 0 and tokens[k].text not in (";", "}", "{"):
            if tokens[k].text == "template":
                self.template_kernel(k, i)
                return
            k -= 1
        found = self._declared_function(i)
        if found is None:
            return
        name, j = found
        close = _matching(tokens, j)
        after = close + 1
        if after >= len(tokens) or tokens[after].text != "{":
            return  # a declaration
        end = _matching(tokens, after)
        number = self.unique()
        self.result.kernels.append(name)
        self.edit(tokens[end].end, tokens[end].end,
                  f' extern "C++" {{ static __mlu_registrar<decltype(&{name}), &{name}> '
                  f'__mlu_registered_{number}("{name}", __MLU_TU_FLAGS); }}')

    def _declared_function(self, qualifier: int):
        """(name, index of its parameter list's '(') of the function a qualifier at `qualifier` declares, or None
        when it declares no function (a variable, a typedef)."""
        tokens = self.tokens
        j = qualifier + 1
        while j < len(tokens) and tokens[j].text != "(":
            if tokens[j].text in (";", "{", "="):
                return None
            j += 1
        if j >= len(tokens) or tokens[j - 1].kind != "id":
            return None
        return tokens[j - 1].text, j

    def template_kernel(self, template: int, qualifier: int) -> None:
        """After a template kernel's definition or declaration, a declaration that gives, for the arguments of
        a launch, the type of the specialization they select: `__mlu_deduce_K(params) -> void (*)(params)`,
        used only inside decltype (a launch `K<<<...>>>(args)` deduces T as a call would, conversions and all)."""
        tokens = self.tokens
        if template + 1 >= len(tokens) or tokens[template + 1].text != "<":
            return
        header_end = self._template_header_end(template + 1)
        found = self._declared_function(qualifier)
        if found is None:
            return
        name, j = found
        close = _matching(tokens, j)
        after = close + 1
        end = _matching(tokens, after) if after < len(tokens) and tokens[after].text == "{" else after
        if end >= len(tokens):
            return
        header = self.source[tokens[template].start:tokens[header_end].end]
        params = self.source[tokens[j].start:tokens[close].end]
        types = "(" + ", ".join(self._without_default(p) for p in self._split_params(j + 1, close)) + ")"
        self.template_kernels.add(name)
        self.edit(tokens[end].end, tokens[end].end,
                  f" {header} __attribute__((unused)) static auto __mlu_deduce_{name}{params} -> void (*){types};")

    def _template_header_end(self, opening: int) -> int:
        """The index of the '>' closing a template parameter list opened at `opening`."""
        tokens, depth, nested = self.tokens, 0, 0
        for k in range(opening, len(tokens)):
            text = tokens[k].text
            nested += {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}.get(text, 0)
            if nested == 0:
                depth += {"<": 1, ">": -1, ">>": -2}.get(text, 0)
                if depth <= 0:
                    return k
        self.error(tokens[opening], "unbalanced template parameter list")

    def _split_params(self, start: int, end: int) -> list:
        """The texts of the top-level comma-separated parameters in tokens[start:end]."""
        tokens, pieces, begin, depth = self.tokens, [], start, 0
        for k in range(start, end):
            text = tokens[k].text
            if text in ("(", "[", "{", "<"):
                depth += 1
            elif text in (")", "]", "}", ">"):
                depth -= 1
            elif text == "," and depth == 0:
                pieces.append((begin, k))
                begin = k + 1
        if begin < end:
            pieces.append((begin, end))
        return [self.source[tokens[a].start:tokens[b - 1].end] for a, b in pieces if b > a]

    @staticmethod
    def _without_default(param: str) -> str:
        """A parameter's text without its default argument (a function type has none)."""
        depth = 0
        for at, char in enumerate(param):
            if char in "([{<":
                depth += 1
            elif char in ")]}>":
                depth -= 1
            elif char == "=" and depth == 0:
                return param[:at].rstrip()
        return param

    def device_function(self, i: int) -> None:
        tokens = self.tokens
        k, inline = i - 1, False
        while k >= 0 and tokens[k].text not in (";", "}", "{", ">", ")"):
            inline |= tokens[k].text in ("inline", "__inline", "__inline__")
            k -= 1
        j = i + 1
        while j < len(tokens) and tokens[j].text not in ("(", ";", "{"):
            inline |= tokens[j].text in ("inline", "__inline", "__inline__")
            j += 1
        self.edit(tokens[i].start, tokens[i].end, "__attribute__((unused))" + ("" if inline else " inline"))

    def launch(self, i: int) -> None:
        tokens = self.tokens
        # the callee: an id-expression, possibly qualified and with template arguments, before <<<
        k = i - 1
        while k >= 0:
            text = tokens[k].text
            if tokens[k].kind == "id" or text == "::":
                k -= 1
            elif text in (">", ">>"):
                depth = 0
                while k >= 0:
                    t = tokens[k].text
                    depth += 2 if t == ">>" else 1 if t == ">" else -1 if t == "<" else 0
                    k -= 1
                    if depth == 0:
                        break
            else:
                break
        first = k + 1
        if first >= i:
            self.error(tokens[i], "<<< without a kernel before it")
        close = self._outside_brackets(i + 1, ">>>")
        if close >= len(tokens) or close + 1 >= len(tokens) or tokens[close + 1].text != "(":
            self.error(tokens[i], "a kernel launch needs kernel<<<dim, ktype, queue>>>(arguments)")
        callee = self.source[tokens[first].start:tokens[i - 1].end]
        config = self.source[tokens[i].end:tokens[close].start]
        name = " ".join(callee.split())
        self.result.launches += 1
        self.result.kernels.append(name)
        escaped = name.replace("\\", "\\\\").replace('"', '\\"')
        kernel_type = f"decltype(&{callee})"
        if tokens[i - 1].kind == "id" and tokens[i - 1].text in self.template_kernels:
            arguments = self.source[tokens[close + 1].end:tokens[_matching(tokens, close + 1)].start]
            scope = self.source[tokens[first].start:tokens[i - 1].start]
            kernel_type = f"decltype({scope}__mlu_deduce_{tokens[i - 1].text}({arguments}))"
        self.edit(tokens[first].start, tokens[close].end,
                  f'__mlu_launch<{kernel_type}, &{callee}>("{escaped}", __MLU_TU_FLAGS, {config})')

    def _outside_brackets(self, start: int, text: str) -> int:
        """The index of the first token from `start` on that is `text` outside every (), [] and {} opened after
        `start` (len(tokens) when there is none)."""
        tokens = self.tokens
        depth = 0
        for k in range(start, len(tokens)):
            here = tokens[k].text
            if here in ("(", "[", "{"):
                depth += 1
            elif here in (")", "]", "}"):
                depth -= 1
            elif here == text and depth == 0:
                return k
        return len(tokens)

    # ---- on-chip arrays ----------------------------------------------------------------------------------------
    def memory_declaration(self, i: int, scope: str) -> None:
        tokens = self.tokens
        qualifier = tokens[i]
        space = MEMORY_QUALIFIERS[qualifier.text]
        # inside parentheses (a parameter, a cast): the qualifier says nothing a host pointer does not
        k, depth = i - 1, 0
        while k >= 0 and tokens[k].text not in (";", "{", "}"):
            depth += {"(": 1, ")": -1}.get(tokens[k].text, 0)
            k -= 1
        if depth > 0:
            self.edit(qualifier.start, qualifier.end, "")
            return
        start = k + 1
        end = self._outside_brackets(i, ";")
        if end >= len(tokens):
            self.error(qualifier, f"a {qualifier.text} declaration without ';'")
        parts = self._declarators(start, end, skip=i)
        specifiers, declarators = parts
        words = [t.text for t in specifiers]
        is_extern = "extern" in words
        type_text = " ".join(t for t in words if t not in ("static", "extern", "__mlu_device__", "thread_local"))
        if "template" in words:
            self.error(qualifier, f"{qualifier.text} in a template declaration is not supported")
        if scope == "other":
            self.error(qualifier, f"{qualifier.text} inside a class or initializer is not supported")
        pieces = []
        for name_token, dims, init in declarators:
            if name_token is None:
                self.error(qualifier, f"cannot read the {qualifier.text} declaration")
            pieces.append(self._declare(name_token, type_text, dims, init, space, scope, is_extern))
        self.edit(tokens[start].start, tokens[end].end, " ".join(pieces))

    def _declarators(self, start: int, end: int, skip: int):
        """(specifier tokens, [(name token, dims text, initializer text or None)]) of a declaration."""
        tokens = self.tokens
        groups, current, depth = [], [], 0
        for k in range(start, end):
            if k == skip:
                continue
            text = tokens[k].text
            if text in ("(", "[", "{"):
                depth += 1
            elif text in (")", "]", "}"):
                depth -= 1
            if text == "," and depth == 0:
                groups.append(current)
                current = []
            else:
                current.append(k)
        groups.append(current)
        specifiers, declarators = [], []
        for number, group in enumerate(groups):
            # the declarator's name: the last identifier before '[', '=' or the end, outside brackets
            name_at, depth = None, 0
            for position, k in enumerate(group):
                text = tokens[k].text
                if depth == 0 and text in ("[", "="):
                    break
                if text in ("(", "[", "{"):
                    depth += 1
                elif text in (")", "]", "}"):
                    depth -= 1
                elif depth == 0 and tokens[k].kind == "id" and text not in ("__attribute__", "const", "volatile"):
                    name_at = position
            if name_at is None:
                declarators.append((None, "", None))
                continue
            if number == 0:
                specifiers = [tokens[k] for k in group[:name_at]]
            if any(tokens[k].text in ("*", "&") for k in group[:name_at]):
                self.error(tokens[group[name_at]], "a pointer declared __nram__/__wram__/__mlu_shared__ is not "
                                                   "supported (declare the array itself on-chip)")
            rest = group[name_at + 1:]
            dims, init = [], None
            for position, k in enumerate(rest):
                if tokens[k].text == "=":
                    init = self.source[tokens[rest[position + 1]].start:tokens[rest[-1]].end]
                    break
                if tokens[k].text == "__attribute__":
                    break
                dims.append(k)
            dims_text = self.source[tokens[dims[0]].start:tokens[dims[-1]].end] if dims else ""
            declarators.append((tokens[group[name_at]], dims_text, init))
        return specifiers, declarators

    def _declare(self, name: Token, type_text: str, dims: str, init, space: str, scope: str, is_extern: bool) -> str:
        n = self.unique()
        array_type = f"__mlu_t_{n}"
        where = f'"{name.file}", {name.line}'.replace("\\", "\\\\")
        pieces = [f"typedef {type_text} {array_type}{dims};"]
        init_ref = "0"
        if init is not None:
            if is_extern:
                self.error(name, f"an extern on-chip array '{name.text}' cannot have an initializer")
            pieces.append(f"static const {array_type} __mlu_init_{n} = {init};")
            init_ref = f"&__mlu_init_{n}"
        if scope.startswith("func"):
            pieces.append(f"static __thread __mlu_site __mlu_site_{n}; static const char __mlu_mark_{n} = 0;")
            pieces.append(f"{array_type} &{name.text} = *({array_type} *)__mlu_static({space}, "
                          f"(int64_t)sizeof({array_type}), &__mlu_site_{n}, \"{name.text}\", &__mlu_mark_{n}, "
                          f"{init_ref}, {where});")
        else:
            accessor = f"__mlu_array_{n}"
            pieces.append(f"static inline {array_type} &{accessor}() {{ static __thread __mlu_site site; return "
                          f"*({array_type} *)__mlu_static({space}, (int64_t)sizeof({array_type}), &site, "
                          f"\"{name.text}\", 0, {init_ref}, {where}); }}")
            self.file_arrays[name.text] = f"{accessor}()"
            self._file_array_from[name.text] = name.end
        return " ".join(pieces)

    _file_array_from: dict

    def replace_file_arrays(self) -> None:
        """Later uses of a file-scope on-chip array call its accessor, except where a declaration of the same name
        shadows it (a parameter or local variable: until the end of its scope)."""
        if not self.file_arrays:
            return
        tokens = self.tokens
        depth = 0
        shadow: dict[str, int] = {}        # name -> brace depth whose end lifts the shadow
        pending: dict[str, int] = {}       # name -> brace depth of a parameter list's function body
        for i, token in enumerate(tokens):
            text = token.text
            if text == "{":
                depth += 1
                for name, level in list(pending.items()):
                    if level == depth:
                        shadow[name] = depth
                        del pending[name]
            elif text == "}":
                for name, level in list(shadow.items()):
                    if level == depth:
                        del shadow[name]
                depth -= 1
            elif text == ";":
                for name, level in list(pending.items()):
                    if level == depth + 1:
                        del pending[name]
            if token.kind != "id" or text not in self.file_arrays or not token.user:
                continue
            if token.start < self._file_array_from[text] or text in shadow:
                continue
            before = tokens[i - 1] if i else None
            after = tokens[i + 1] if i + 1 < len(tokens) else None
            if before is not None and before.text in (".", "->", "::"):
                continue
            if self._declares(i):
                inside_parens = self._paren_depth(i) > 0
                if inside_parens:
                    pending[text] = depth + 1
                else:
                    shadow[text] = depth
                continue
            self.edit(token.start, token.end, self.file_arrays[text])

    def _declares(self, i: int) -> bool:
        tokens = self.tokens
        after = tokens[i + 1].text if i + 1 < len(tokens) else ""
        if after not in (",", ")", ";", "=", "[", "{"):
            return False
        k = i - 1
        while k >= 0 and tokens[k].text in ("*", "&", "&&", "const", "volatile", "__restrict__", "__restrict"):
            k -= 1
        if k < 0:
            return False
        previous = tokens[k]
        if previous.kind == "id" and previous.text not in _NOT_A_TYPE:
            return k < i - 1 or tokens[k - 1].text not in (".", "->") if k > 0 else True
        return previous.text == ">" and k < i - 1  # std::vector<int> *name
    
    def _paren_depth(self, i: int) -> int:
        depth, k = 0, i - 1
        tokens = self.tokens
        while k >= 0 and tokens[k].text not in (";", "{", "}"):
            depth += {"(": 1, ")": -1}.get(tokens[k].text, 0)
            k -= 1
        return depth

    # ---- loops -------------------------------------------------------------------------------------------------
    def loop(self, i: int, do_tails: set) -> None:
        tokens = self.tokens
        text = tokens[i].text
        poll = " if (__mlu_loop_poll()) {} else "
        if text == "do":
            body = i + 1
            if body < len(tokens) and tokens[body].text == "{":
                tail = _matching(tokens, body) + 1
                if tail < len(tokens) and tokens[tail].text == "while":
                    do_tails.add(tail)
            self.edit(tokens[i].end, tokens[i].end, poll)
            return
        if i in do_tails:
            return
        if i + 1 >= len(tokens) or tokens[i + 1].text != "(":
            return
        close = _matching(tokens, i + 1)
        self.edit(tokens[close].end, tokens[close].end, poll)


def rewrite(source: str, user_file=lambda path: True) -> Result:
    """Rewrite one preprocessed translation unit; `user_file(path)` says whether code from `path` is rewritten."""
    rewriter = Rewriter(source, user_file)
    rewriter._file_array_from = {}
    result = rewriter.run()
    flags = (1 if result.barriers else 0) | (2 if result.memory_cores else 0)
    # a first line before the first line marker, which numbers the lines after it
    result.text = f"static const long long __MLU_TU_FLAGS = {flags};\n" + result.text
    return result
