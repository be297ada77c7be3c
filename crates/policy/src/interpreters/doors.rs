//! The calls in inline code that start programs (the "doors": `os.system`, `subprocess.run`,
//! `child_process.execSync`, Perl and Ruby `system`/`exec`, `IO.popen`, `Open3` …), and the
//! calls that run code or call a function by name, which Bosun cannot follow.

use super::Language;

/// How a door takes the command it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Style {
    /// The first argument: a string is a shell command line, a list is argv.
    First,
    /// A program, then an optional list of its arguments: `spawn("curl", ["-s", "x"])`.
    ProgramThenList,
    /// Every positional argument is a word of argv (a single string is a command line).
    List,
    /// [`Style::List`] after an optional environment hash: Ruby `system({"A" => "1"}, "x")`.
    ListAfterEnv,
    /// Node's `fork("worker.js")`: runs a JavaScript file.
    NodeFile,
    /// Runs code in the same language: `eval("…")`, Python's `exec("…")`, `new Function("…")`.
    Code,
    /// Loads a module: a literal name is fine, a computed one could be anything.
    Module,
    /// Perl `open`: a pipe mode (`-|`, `|-`) or a `|` at either end of a two-argument open.
    PerlOpen,
    /// Ruby `open("|cmd")`.
    RubyOpen,
    /// Perl `open2`/`open3`: file handles, then the command.
    OpenN,
    /// Calls a function by a name Bosun cannot see, or loads native code.
    Unfollowable,
}

pub(super) struct Door {
    pub(super) name: &'static str,
    /// The receivers the name must be called on (`subprocess.run`); `None`: any or none.
    pub(super) receivers: Option<&'static [&'static str]>,
    /// Called without a receiver, it still counts (Ruby's `system` is `Kernel.system`).
    pub(super) bare: bool,
    pub(super) style: Style,
}

const fn door(name: &'static str, style: Style) -> Door {
    Door {
        name,
        receivers: None,
        bare: true,
        style,
    }
}

const fn on(
    name: &'static str,
    receivers: &'static [&'static str],
    bare: bool,
    style: Style,
) -> Door {
    Door {
        name,
        receivers: Some(receivers),
        bare,
        style,
    }
}

use Style::*;

const PYTHON: &[Door] = &[
    door("system", First),
    door("popen", First),
    door("Popen", First),
    door("check_output", First),
    door("check_call", First),
    door("getoutput", First),
    door("getstatusoutput", First),
    on("run", &["subprocess"], false, First),
    on("call", &["subprocess"], false, First),
    door("execv", ProgramThenList),
    door("execve", ProgramThenList),
    door("execvp", ProgramThenList),
    door("execvpe", ProgramThenList),
    door("execl", List),
    door("execle", List),
    door("execlp", List),
    door("execlpe", List),
    door("spawnl", List),
    door("spawnle", List),
    door("spawnlp", List),
    door("spawnlpe", List),
    door("spawnv", List),
    door("spawnve", List),
    door("spawnvp", List),
    door("spawnvpe", List),
    door("posix_spawn", ProgramThenList),
    door("posix_spawnp", ProgramThenList),
    on("spawn", &["pty"], false, First),
    door("create_subprocess_shell", First),
    door("create_subprocess_exec", List),
    door("startfile", First),
    on("exec", &["builtins"], true, Code),
    on("eval", &["builtins"], true, Code),
    on("compile", &["builtins"], true, Code),
    door("__import__", Module),
    door("import_module", Module),
    door("getattr", Unfollowable),
    door("ctypes", Unfollowable),
    door("cffi", Unfollowable),
    door("__builtins__", Unfollowable),
    door("builtins", Unfollowable),
    door("__subclasses__", Unfollowable),
    door("__globals__", Unfollowable),
    door("runpy", Unfollowable),
    on(
        "loads",
        &["pickle", "marshal", "dill", "cloudpickle"],
        false,
        Unfollowable,
    ),
];

const JAVASCRIPT: &[Door] = &[
    door("exec", First),
    door("execSync", First),
    door("execFile", ProgramThenList),
    door("execFileSync", ProgramThenList),
    door("spawn", ProgramThenList),
    door("spawnSync", ProgramThenList),
    door("fork", NodeFile),
    door("eval", Code),
    door("Function", Code),
    door("runInNewContext", Code),
    door("runInThisContext", Code),
    door("runInContext", Code),
    door("compileFunction", Code),
    door("require", Module),
    door("import", Module),
    door("binding", Unfollowable),
    door("dlopen", Unfollowable),
    door("constructor", Unfollowable),
];

const PERL: &[Door] = &[
    door("system", List),
    door("exec", List),
    door("systemx", List),
    door("capture", List),
    door("capturex", List),
    door("readpipe", First),
    door("open", PerlOpen),
    door("open2", OpenN),
    door("open3", OpenN),
    door("eval", Code),
    door("require", Module),
    door("do", Unfollowable),
    door("syscall", Unfollowable),
];

const KERNEL: &[&str] = &["Kernel", "Process", "PTY"];
const OPEN3: &[&str] = &["Open3"];

const RUBY: &[Door] = &[
    on("system", KERNEL, true, ListAfterEnv),
    on("exec", KERNEL, true, ListAfterEnv),
    on("spawn", KERNEL, true, ListAfterEnv),
    on("popen", &["IO"], false, First),
    on("popen2", OPEN3, true, ListAfterEnv),
    on("popen2e", OPEN3, true, ListAfterEnv),
    on("popen3", OPEN3, true, ListAfterEnv),
    on("capture2", OPEN3, true, ListAfterEnv),
    on("capture2e", OPEN3, true, ListAfterEnv),
    on("capture3", OPEN3, true, ListAfterEnv),
    on("pipeline", OPEN3, true, ListAfterEnv),
    on("pipeline_r", OPEN3, true, ListAfterEnv),
    on("pipeline_w", OPEN3, true, ListAfterEnv),
    on("pipeline_rw", OPEN3, true, ListAfterEnv),
    on("pipeline_start", OPEN3, true, ListAfterEnv),
    on("open", &["Kernel"], true, RubyOpen),
    door("eval", Code),
    door("instance_eval", Code),
    door("class_eval", Code),
    door("module_eval", Code),
    door("send", Unfollowable),
    door("public_send", Unfollowable),
    door("__send__", Unfollowable),
    door("method", Unfollowable),
    door("const_get", Unfollowable),
    door("syscall", Unfollowable),
    door("Fiddle", Unfollowable),
];

/// Door names too common as words to count when a whole string spells them.
const COMMON_WORDS: &[&str] = &[
    "open",
    "run",
    "call",
    "method",
    "send",
    "compile",
    "capture",
    "do",
    "require",
    "import",
    "binding",
    "constructor",
    "loads",
    "builtins",
];

/// A door name that means the door wherever it is spelled (not a common word or a loader).
pub(super) fn distinctive(door: &Door) -> bool {
    door.style != Module && !COMMON_WORDS.contains(&door.name)
}

pub(super) fn doors(language: Language) -> &'static [Door] {
    match language {
        Language::Python => PYTHON,
        Language::JavaScript => JAVASCRIPT,
        Language::Perl => PERL,
        Language::Ruby => RUBY,
    }
}
