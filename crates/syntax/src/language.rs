//! The one table of languages: which files are which language, and each language's grammar.
//!
//! Everything else asks this table; no other file (in this crate or any other) names a grammar
//! crate. A language's queries (the tags of the repository map, …) are fields of [`Spec`].

/// A language Bosun can parse.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Language {
    Rust,
    Python,
    TypeScript,
    Tsx,
    JavaScript,
    Go,
    Java,
    C,
    Cpp,
    Ruby,
    Json,
    Toml,
}

/// One row of the table.
struct Spec {
    language: Language,
    name: &'static str,
    /// Lower-case extensions without the dot; matched ASCII-case-insensitively.
    extensions: &'static [&'static str],
    /// Whole file names (matched exactly) for files without a telling extension.
    file_names: &'static [&'static str],
    grammar: fn() -> tree_sitter::Language,
    /// The tags queries (definitions and references) its grammar crate ships, in order; for
    /// TypeScript the JavaScript ones come first (its grammar extends JavaScript's and its
    /// crate's queries name only what it adds). Empty: no tags.
    tags: &'static [&'static str],
}

/// Definitions the Rust grammar's tags query leaves out: constants, statics, type aliases.
const RUST_DEFINITIONS: &str = r#"
(const_item name: (identifier) @name) @definition.constant
(static_item name: (identifier) @name) @definition.constant
(type_item name: (type_identifier) @name) @definition.type
"#;

/// Top-level `const` bindings (the JavaScript grammar's tags query has none).
const JS_CONSTANTS: &str = r#"
(program (lexical_declaration kind: "const" (variable_declarator name: (identifier) @name)) @definition.constant)
(program (export_statement (lexical_declaration kind: "const" (variable_declarator name: (identifier) @name)) @definition.constant))
"#;

/// TypeScript definitions its tags query leaves out: enums and type aliases.
const TS_DEFINITIONS: &str = r#"
(enum_declaration name: (identifier) @name) @definition.enum
(type_alias_declaration name: (type_identifier) @name) @definition.type
"#;

/// Go constants (its tags query has none).
const GO_DEFINITIONS: &str = r#"
(const_spec name: (identifier) @name) @definition.constant
"#;

/// Bosun's own reference patterns for C: its crate's tags name definitions only.
const C_REFERENCES: &str = r#"
(call_expression function: (identifier) @name) @reference.call
(call_expression function: (field_expression field: (field_identifier) @name)) @reference.call
(type_identifier) @name @reference.type
"#;

/// Bosun's own reference patterns for C++ (its crate's tags name definitions only).
const CPP_REFERENCES: &str = r#"
(call_expression function: (identifier) @name) @reference.call
(call_expression function: (field_expression field: (field_identifier) @name)) @reference.call
(call_expression function: (qualified_identifier name: (identifier) @name)) @reference.call
(type_identifier) @name @reference.type
"#;

/// Indexed by `Language as usize` (a test checks the order).
const TABLE: [Spec; 12] = [
    Spec {
        language: Language::Rust,
        name: "rust",
        extensions: &["rs"],
        file_names: &[],
        grammar: || tree_sitter_rust::LANGUAGE.into(),
        tags: &[tree_sitter_rust::TAGS_QUERY, RUST_DEFINITIONS],
    },
    Spec {
        language: Language::Python,
        name: "python",
        extensions: &["py", "pyi", "pyw"],
        file_names: &[],
        grammar: || tree_sitter_python::LANGUAGE.into(),
        tags: &[tree_sitter_python::TAGS_QUERY],
    },
    Spec {
        language: Language::TypeScript,
        name: "typescript",
        extensions: &["ts", "mts", "cts"],
        file_names: &[],
        grammar: || tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
        tags: &[
            tree_sitter_javascript::TAGS_QUERY,
            tree_sitter_typescript::TAGS_QUERY,
            JS_CONSTANTS,
            TS_DEFINITIONS,
        ],
    },
    Spec {
        language: Language::Tsx,
        name: "tsx",
        extensions: &["tsx"],
        file_names: &[],
        grammar: || tree_sitter_typescript::LANGUAGE_TSX.into(),
        tags: &[
            tree_sitter_javascript::TAGS_QUERY,
            tree_sitter_typescript::TAGS_QUERY,
            JS_CONSTANTS,
            TS_DEFINITIONS,
        ],
    },
    Spec {
        language: Language::JavaScript,
        name: "javascript",
        // The JavaScript grammar parses JSX too.
        extensions: &["js", "mjs", "cjs", "jsx"],
        file_names: &[],
        grammar: || tree_sitter_javascript::LANGUAGE.into(),
        tags: &[tree_sitter_javascript::TAGS_QUERY, JS_CONSTANTS],
    },
    Spec {
        language: Language::Go,
        name: "go",
        extensions: &["go"],
        file_names: &[],
        grammar: || tree_sitter_go::LANGUAGE.into(),
        tags: &[tree_sitter_go::TAGS_QUERY, GO_DEFINITIONS],
    },
    Spec {
        language: Language::Java,
        name: "java",
        extensions: &["java"],
        file_names: &[],
        grammar: || tree_sitter_java::LANGUAGE.into(),
        tags: &[tree_sitter_java::TAGS_QUERY],
    },
    Spec {
        language: Language::C,
        name: "c",
        // `.h` is read as C++ (below): C++ projects name their headers `.h` as often as not, and
        // the C++ grammar reads almost all C, while the C grammar reads no class or template.
        extensions: &["c"],
        file_names: &[],
        grammar: || tree_sitter_c::LANGUAGE.into(),
        tags: &[tree_sitter_c::TAGS_QUERY, C_REFERENCES],
    },
    Spec {
        language: Language::Cpp,
        name: "cpp",
        extensions: &["cc", "cpp", "cxx", "c++", "hpp", "hh", "hxx", "h++", "h"],
        file_names: &[],
        grammar: || tree_sitter_cpp::LANGUAGE.into(),
        tags: &[tree_sitter_cpp::TAGS_QUERY, CPP_REFERENCES],
    },
    Spec {
        language: Language::Ruby,
        name: "ruby",
        extensions: &["rb", "rake", "gemspec", "ru"],
        file_names: &["Rakefile", "Gemfile", "Guardfile", "Vagrantfile"],
        grammar: || tree_sitter_ruby::LANGUAGE.into(),
        tags: &[tree_sitter_ruby::TAGS_QUERY],
    },
    Spec {
        language: Language::Json,
        name: "json",
        // Not `.jsonc`/`.json5`, nor the `.json` files whose tools accept comments and trailing
        // commas (see `is_json_with_comments`): strict JSON rules there would cry wolf.
        extensions: &["json"],
        file_names: &[],
        grammar: || tree_sitter_json::LANGUAGE.into(),
        tags: &[],
    },
    Spec {
        language: Language::Toml,
        name: "toml",
        extensions: &["toml"],
        file_names: &["Cargo.lock", "Pipfile", "poetry.lock", "uv.lock"],
        grammar: || tree_sitter_toml_ng::LANGUAGE.into(),
        tags: &[],
    },
];

impl Language {
    /// Every language, in table order.
    pub const ALL: [Language; 12] = [
        Language::Rust,
        Language::Python,
        Language::TypeScript,
        Language::Tsx,
        Language::JavaScript,
        Language::Go,
        Language::Java,
        Language::C,
        Language::Cpp,
        Language::Ruby,
        Language::Json,
        Language::Toml,
    ];

    fn spec(self) -> &'static Spec {
        &TABLE[self as usize]
    }

    /// Lower-case name: "rust", "python", "typescript", "tsx", "javascript", "go", "java", "c",
    /// "cpp", "ruby", "json", "toml".
    pub fn name(self) -> &'static str {
        self.spec().name
    }

    /// The extensions (lower case, without the dot) that mean this language.
    pub fn extensions(self) -> &'static [&'static str] {
        self.spec().extensions
    }

    /// Whole file names that mean this language (`Gemfile`, `Cargo.lock`, …).
    pub fn file_names(self) -> &'static [&'static str] {
        self.spec().file_names
    }

    /// The tree-sitter grammar (for the repository map's queries and parsers).
    pub fn grammar(self) -> tree_sitter::Language {
        (self.spec().grammar)()
    }

    /// The tags queries of its grammar crate(s), in order (see [`crate::tags`]).
    pub fn tags_queries(self) -> &'static [&'static str] {
        self.spec().tags
    }

    /// The language of a path (relative or absolute, `/` or `\` separated), from its file name or
    /// extension; `None` for a language Bosun does not parse.
    pub fn for_path(path: &str) -> Option<Language> {
        let file_name = path.rsplit(['/', '\\']).next().unwrap_or(path);
        if let Some(spec) = TABLE.iter().find(|s| s.file_names.contains(&file_name)) {
            return Some(spec.language);
        }
        let (_, ext) = file_name.rsplit_once('.')?;
        let spec = TABLE
            .iter()
            .find(|s| s.extensions.iter().any(|e| e.eq_ignore_ascii_case(ext)))?;
        if spec.language == Language::Json && is_json_with_comments(path, file_name) {
            return None;
        }
        Some(spec.language)
    }
}

impl std::fmt::Display for Language {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// `.json` files whose readers accept comments and trailing commas ("JSON with comments"):
/// TypeScript's and JavaScript's project files (`tsconfig*.json`, `jsconfig*.json`), VS Code's
/// settings (anything under `.vscode/`), dev containers, ESLint's legacy config and Deno's.
/// (The JSON grammar itself skips comments, so it is trailing commas that would be flagged.)
fn is_json_with_comments(path: &str, file_name: &str) -> bool {
    let lower = file_name.to_ascii_lowercase();
    let project_file = |prefix: &str| {
        lower.strip_prefix(prefix).is_some_and(|rest| {
            rest == ".json"
                || (rest.starts_with('.') || rest.starts_with('-')) && rest.ends_with(".json")
        })
    };
    project_file("tsconfig")
        || project_file("jsconfig")
        || matches!(
            lower.as_str(),
            "devcontainer.json" | ".devcontainer.json" | ".eslintrc.json" | "deno.json"
        )
        || path
            .split(['/', '\\'])
            .any(|dir| dir == ".vscode" || dir == ".devcontainer")
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn the_table_is_in_enum_order_and_every_grammar_loads() {
        for (i, lang) in Language::ALL.iter().enumerate() {
            assert_eq!(TABLE[i].language, *lang);
            assert_eq!(*lang as usize, i);
            let mut parser = tree_sitter::Parser::new();
            assert!(parser.set_language(&lang.grammar()).is_ok(), "{lang}");
        }
    }

    #[test]
    fn names() {
        let names: Vec<_> = Language::ALL.iter().map(|l| l.name()).collect();
        assert_eq!(
            names,
            [
                "rust",
                "python",
                "typescript",
                "tsx",
                "javascript",
                "go",
                "java",
                "c",
                "cpp",
                "ruby",
                "json",
                "toml"
            ]
        );
    }

    #[test]
    fn paths_map_to_languages() {
        let cases = [
            ("src/main.rs", Some(Language::Rust)),
            ("a/b/calc.py", Some(Language::Python)),
            ("stubs/x.pyi", Some(Language::Python)),
            ("web/app.ts", Some(Language::TypeScript)),
            ("web/types.d.ts", Some(Language::TypeScript)),
            ("web/app.mts", Some(Language::TypeScript)),
            ("web/app.cts", Some(Language::TypeScript)),
            ("web/App.tsx", Some(Language::Tsx)),
            ("web/app.js", Some(Language::JavaScript)),
            ("web/app.mjs", Some(Language::JavaScript)),
            ("web/app.cjs", Some(Language::JavaScript)),
            ("web/App.jsx", Some(Language::JavaScript)),
            ("cmd/main.go", Some(Language::Go)),
            ("src/Main.java", Some(Language::Java)),
            ("lib/x.c", Some(Language::C)),
            ("lib/x.h", Some(Language::Cpp)),
            ("lib/x.cc", Some(Language::Cpp)),
            ("lib/x.cpp", Some(Language::Cpp)),
            ("lib/x.cxx", Some(Language::Cpp)),
            ("lib/x.hpp", Some(Language::Cpp)),
            ("lib/x.hh", Some(Language::Cpp)),
            ("lib/x.hxx", Some(Language::Cpp)),
            ("app/models/user.rb", Some(Language::Ruby)),
            ("lib/tasks/db.rake", Some(Language::Ruby)),
            ("Rakefile", Some(Language::Ruby)),
            ("sub/Gemfile", Some(Language::Ruby)),
            ("x.gemspec", Some(Language::Ruby)),
            ("Gemfile.lock", None),
            ("package.json", Some(Language::Json)),
            ("data/X.JSON", Some(Language::Json)),
            ("Cargo.toml", Some(Language::Toml)),
            ("Cargo.lock", Some(Language::Toml)),
            ("pyproject.toml", Some(Language::Toml)),
            (r"C:\src\main.rs", Some(Language::Rust)),
            ("README.md", None),
            ("Makefile", None),
            ("rs", None),
            ("src/noext", None),
            ("main.rs.orig", None),
        ];
        for (path, want) in cases {
            assert_eq!(Language::for_path(path), want, "{path}");
        }
    }

    #[test]
    fn json_with_comments_is_not_strict_json() {
        for path in [
            "tsconfig.json",
            "packages/web/tsconfig.build.json",
            "tsconfig-base.json",
            "jsconfig.json",
            ".vscode/settings.json",
            ".vscode/launch.json",
            ".devcontainer/devcontainer.json",
            ".eslintrc.json",
            "deno.json",
            "x.jsonc",
            "x.json5",
        ] {
            assert_eq!(Language::for_path(path), None, "{path}");
        }
        assert_eq!(Language::for_path("tsconfigs.json"), Some(Language::Json));
    }
}
