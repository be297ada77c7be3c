# Bosun docstring-examples check: each changed Python file is imported, then the examples its
# functions docstrings give are run: doctest ">>>" examples, and lines of the form
# "name(args) == value" in the docstring of the function "name". One line per failure,
# "path:line: error: message" (the form compilers print, which the digest reads). A module
# that needs a package this machine lacks is skipped.
# (Run as python3 -c with the files as arguments: this text holds no single quote.)
import ast, doctest, importlib, os, sys, traceback

sys.path.insert(0, os.getcwd())
said = []


def say(path, line, text):
    # Printed at the end: doctest replaces sys.stdout while an example runs.
    said.append(f"{path}:{line}: error: {text}")


class Runner(doctest.DocTestRunner):
    def report_start(self, out, test, example):
        pass

    def report_success(self, out, test, example, got):
        pass

    def report_failure(self, out, test, example, got):
        line = (test.lineno or 0) + example.lineno + 1
        say(PATH, line, f"the docstring example `>>> {example.source.strip()}` gives {got.strip()!r}, not {example.want.strip()!r}")

    def report_unexpected_exception(self, out, test, example, exc_info):
        line = (test.lineno or 0) + example.lineno + 1
        say(PATH, line, f"the docstring example `>>> {example.source.strip()}` raises {exc_info[0].__name__}: {exc_info[1]}")


for PATH in sys.argv[1:]:
    if not PATH.endswith(".py") or not os.path.isfile(PATH):
        continue
    name = PATH[:-3].replace("/", ".")
    if name.endswith(".__init__"):
        name = name[: -len(".__init__")]
    if name.startswith("src."):
        sys.path.insert(0, os.path.join(os.getcwd(), "src"))
        name = name[len("src."):]
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as e:
        missing = (e.name or "").split(".")[0]
        if not (os.path.exists(missing + ".py") or os.path.isdir(missing)):
            continue
        say(PATH, 1, f"importing {name} fails: ModuleNotFoundError: {e}")
        continue
    except BaseException as e:
        frames = [f for f in traceback.extract_tb(e.__traceback__) if f.filename.endswith(PATH)]
        line = frames[-1].lineno if frames else 1
        say(PATH, line, f"importing {name} fails: {type(e).__name__}: {e}")
        continue
    try:
        tree = ast.parse(open(PATH, encoding="utf-8").read())
    except (SyntaxError, UnicodeDecodeError):
        continue
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or not node.body:
            continue
        doc = ast.get_docstring(node, clean=False)
        if not doc:
            continue
        first = node.body[0].lineno
        for i, text in enumerate(doc.splitlines()):
            s = text.strip().rstrip(".;,")
            if not s.startswith(node.name + "("):
                continue
            try:
                expr = ast.parse(s, mode="eval").body
            except SyntaxError:
                continue
            if not (isinstance(expr, ast.Compare) and len(expr.ops) == 1 and isinstance(expr.ops[0], ast.Eq)):
                continue
            left, right = ast.unparse(expr.left), ast.unparse(expr.comparators[0])
            scope = dict(vars(module))
            try:
                want = eval(right, scope)
            except BaseException:
                continue
            try:
                got = eval(left, scope)
            except BaseException as e:
                say(PATH, first + i, f"the docstring example `{s}` raises {type(e).__name__}: {e}")
                continue
            if got != want:
                say(PATH, first + i, f"the docstring example `{s}` is not true: {left} returns {got!r}")
    for test in doctest.DocTestFinder().find(module, name):
        if test.filename and os.path.abspath(test.filename) != os.path.abspath(PATH):
            continue
        Runner(optionflags=doctest.ELLIPSIS).run(test, out=lambda text: None, clear_globs=True)

for line in said:
    print(line)
sys.exit(1 if said else 0)
