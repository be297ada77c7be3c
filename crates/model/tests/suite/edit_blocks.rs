//! Edit blocks written as text (whole files, search/replace) for small models.

use bosun_model::{EditBlock, EditFormat, EditKind, instructions, parse_edit_blocks};
use pretty_assertions::assert_eq;

fn whole(path: &str, content: &str) -> EditBlock {
    EditBlock {
        path: path.into(),
        kind: EditKind::Whole {
            content: content.into(),
        },
    }
}

fn sr(path: &str, search: &str, replace: &str) -> EditBlock {
    EditBlock {
        path: path.into(),
        kind: EditKind::SearchReplace {
            search: search.into(),
            replace: replace.into(),
        },
    }
}

#[test]
fn every_path_line_form_names_the_file_of_a_whole_block() {
    for line in [
        "src/calc.py",
        "`src/calc.py`",
        "**src/calc.py**",
        "**`src/calc.py`**",
        "# src/calc.py",
        "### src/calc.py",
        "File: src/calc.py",
        "file: `src/calc.py`",
        "src/calc.py:",
        "`src/calc.py`:",
        "./src/calc.py",
    ] {
        let text = format!("{line}\n```python\ndef add(a, b):\n    return a + b\n```\n");
        let found = parse_edit_blocks(&text, EditFormat::Whole);
        assert_eq!(
            found.edits,
            vec![whole("src/calc.py", "def add(a, b):\n    return a + b\n")],
            "{line}"
        );
        assert_eq!(found.problems, Vec::<String>::new(), "{line}");
        assert_eq!(found.remaining_text, "", "{line}");
    }
}

#[test]
fn a_search_replace_block_in_a_fence_after_its_path() {
    let text = "I'll fix the sign.\n\nsrc/calc.py\n```python\n<<<<<<< SEARCH\n    return a - b\n=======\n    return a + b\n>>>>>>> REPLACE\n```\nThat fixes it.";
    let found = parse_edit_blocks(text, EditFormat::SearchReplace);
    assert_eq!(
        found.edits,
        vec![sr(
            "src/calc.py",
            "    return a - b\n",
            "    return a + b\n"
        )]
    );
    assert!(found.problems.is_empty(), "{:?}", found.problems);
    assert_eq!(found.remaining_text, "I'll fix the sign.\n\nThat fixes it.");
}

#[test]
fn several_blocks_share_a_fence_and_a_path_and_blocks_follow_one_another() {
    let text = "a.py\n```\n<<<<<<< SEARCH\none\n=======\nONE\n>>>>>>> REPLACE\n<<<<<<< SEARCH\ntwo\n=======\nTWO\n>>>>>>> REPLACE\n```\nb.py\n```\n<<<<<<< SEARCH\nthree\n=======\nTHREE\n>>>>>>> REPLACE\n```\n";
    let found = parse_edit_blocks(text, EditFormat::SearchReplace);
    assert_eq!(
        found.edits,
        vec![
            sr("a.py", "one\n", "ONE\n"),
            sr("a.py", "two\n", "TWO\n"),
            sr("b.py", "three\n", "THREE\n"),
        ]
    );
    assert!(found.problems.is_empty());
}

#[test]
fn blocks_without_a_fence_and_a_path_inside_the_fence_are_accepted() {
    let text = "notes.txt\n<<<<<<< SEARCH\nold\n=======\nnew\n>>>>>>> REPLACE\n<<<<<<< SEARCH\nmore\n=======\nMORE\n>>>>>>> REPLACE\n\n```\nlib/x.rs\n<<<<<<< SEARCH\nfn a() {}\n=======\nfn b() {}\n>>>>>>> REPLACE\n```";
    let found = parse_edit_blocks(text, EditFormat::SearchReplace);
    assert_eq!(
        found.edits,
        vec![
            sr("notes.txt", "old\n", "new\n"),
            sr("notes.txt", "more\n", "MORE\n"),
            sr("lib/x.rs", "fn a() {}\n", "fn b() {}\n"),
        ]
    );
    assert_eq!(found.remaining_text, "");
}

#[test]
fn an_empty_search_is_a_new_file() {
    let text = "docs/new.md\n```markdown\n<<<<<<< SEARCH\n=======\n# New\n>>>>>>> REPLACE\n```";
    let found = parse_edit_blocks(text, EditFormat::SearchReplace);
    assert_eq!(found.edits, vec![sr("docs/new.md", "", "# New\n")]);
}

#[test]
fn crlf_replies_read_as_lf() {
    let text = "a.txt\r\n```\r\n<<<<<<< SEARCH\r\nx\r\n=======\r\ny\r\n>>>>>>> REPLACE\r\n```\r\nb.txt\r\n```\r\nwhole\r\n```\r\n";
    let found = parse_edit_blocks(text, EditFormat::Whole);
    assert_eq!(
        found.edits,
        vec![sr("a.txt", "x\n", "y\n"), whole("b.txt", "whole\n")]
    );
}

#[test]
fn blocks_inside_prose_leave_the_prose() {
    let text = "First the helper.\n\nutils/math.py:\n```python\nPI = 3.14\n```\n\nThen a test:\n\n**tests/test_math.py**\n```python\nfrom utils.math import PI\n```\n\nBoth files are written.";
    let found = parse_edit_blocks(text, EditFormat::Whole);
    assert_eq!(
        found.edits,
        vec![
            whole("utils/math.py", "PI = 3.14\n"),
            whole("tests/test_math.py", "from utils.math import PI\n"),
        ]
    );
    assert_eq!(
        found.remaining_text,
        "First the helper.\n\nThen a test:\n\nBoth files are written."
    );
}

#[test]
fn whole_mode_accepts_search_replace_blocks_too() {
    let text = "a.py\n```python\nprint(1)\n```\nb.py\n```python\n<<<<<<< SEARCH\nx = 1\n=======\nx = 2\n>>>>>>> REPLACE\n```";
    let found = parse_edit_blocks(text, EditFormat::Whole);
    assert_eq!(
        found.edits,
        vec![
            whole("a.py", "print(1)\n"),
            sr("b.py", "x = 1\n", "x = 2\n")
        ]
    );
}

#[test]
fn search_replace_mode_takes_no_whole_file_and_no_plain_code() {
    let text = "Here is how it works:\n```python\ndef add(a, b):\n    return a + b\n```\nsrc/calc.py\n```python\nprint(2)\n```";
    let found = parse_edit_blocks(text, EditFormat::SearchReplace);
    assert_eq!(found.edits, vec![]);
    assert_eq!(found.problems, Vec::<String>::new());
    assert_eq!(found.remaining_text, text);
}

#[test]
fn whole_mode_reports_a_file_without_a_path_but_leaves_plain_code() {
    let plain = "It works like this:\n```python\nadd(1, 2)\n```";
    let found = parse_edit_blocks(plain, EditFormat::Whole);
    assert_eq!((found.edits.len(), found.problems.len()), (0, 0));
    assert_eq!(found.remaining_text, plain);

    let meant = "Here is the updated file:\n```python\nprint(1)\n```";
    let found = parse_edit_blocks(meant, EditFormat::Whole);
    assert_eq!(found.edits, vec![]);
    assert_eq!(found.problems.len(), 1);
    assert!(
        found.problems[0].contains("no path line"),
        "{:?}",
        found.problems
    );
}

#[test]
fn malformed_blocks_are_reported_not_dropped() {
    let no_replace = "a.py\n```\n<<<<<<< SEARCH\nx\n=======\ny\n```";
    let found = parse_edit_blocks(no_replace, EditFormat::SearchReplace);
    assert_eq!(found.edits, vec![]);
    assert_eq!(
        found.problems,
        vec![
            "the search/replace block for `a.py`: the block has no `>>>>>>> REPLACE` line; nothing in it was applied"
        ]
    );

    let no_divider = "a.py\n<<<<<<< SEARCH\nx\n>>>>>>> REPLACE\n";
    let found = parse_edit_blocks(no_divider, EditFormat::SearchReplace);
    assert_eq!(found.edits, vec![]);
    assert!(
        found.problems[0].contains("no `=======`"),
        "{:?}",
        found.problems
    );

    let no_path = "Change this:\n```\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n```";
    let found = parse_edit_blocks(no_path, EditFormat::SearchReplace);
    assert_eq!(found.edits, vec![]);
    assert!(
        found.problems[0].contains("no path line"),
        "{:?}",
        found.problems
    );
    assert_eq!(found.remaining_text, "Change this:");

    let cut = "big.py\n```python\nline 1\nline 2";
    let found = parse_edit_blocks(cut, EditFormat::Whole);
    assert_eq!(found.edits, vec![]);
    assert!(
        found.problems[0].contains("no closing"),
        "{:?}",
        found.problems
    );
}

#[test]
fn paths_outside_the_repository_are_refused() {
    for (line, why) in [
        ("../outside.txt", "`..`"),
        ("src/../../x.txt", "`..`"),
        ("/etc/passwd", "absolute"),
        ("~/notes.txt", "absolute"),
        ("C:\\Windows\\x.txt", "absolute"),
    ] {
        let text = format!("{line}\n```\n<<<<<<< SEARCH\n=======\nhi\n>>>>>>> REPLACE\n```");
        let found = parse_edit_blocks(&text, EditFormat::SearchReplace);
        assert_eq!(found.edits, vec![], "{line}");
        assert_eq!(found.problems.len(), 1, "{line}");
        assert!(
            found.problems[0].contains(why),
            "{line}: {:?}",
            found.problems
        );

        let text = format!("{line}\n```\nhi\n```");
        let found = parse_edit_blocks(&text, EditFormat::Whole);
        assert_eq!(found.edits, vec![], "{line}");
        assert!(
            found.problems[0].contains(why),
            "{line}: {:?}",
            found.problems
        );
    }
}

#[test]
fn a_tool_call_in_a_json_fence_is_not_an_edit() {
    let text =
        "calls.json\n```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.py\"}}\n```";
    for format in [EditFormat::Whole, EditFormat::SearchReplace] {
        let found = parse_edit_blocks(text, format);
        assert_eq!(found.edits, vec![], "{format}");
        assert!(found.problems.is_empty(), "{format}");
        assert_eq!(found.remaining_text, text);
    }
    // A JSON file that is not a call is a file.
    let config = "config.json\n```json\n{\"debug\": true}\n```";
    let found = parse_edit_blocks(config, EditFormat::Whole);
    assert_eq!(
        found.edits,
        vec![whole("config.json", "{\"debug\": true}\n")]
    );
}

#[test]
fn prose_lines_are_not_paths() {
    for line in [
        "Here is the code:",
        "Example:",
        "e.g.",
        "1.5",
        "Run it with python.",
    ] {
        let text = format!("{line}\n```\nx = 1\n```");
        let found = parse_edit_blocks(&text, EditFormat::Whole);
        assert_eq!(found.edits, vec![], "{line}");
    }
}

#[test]
fn the_tools_format_finds_nothing() {
    let text = "a.py\n```\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n```";
    let found = parse_edit_blocks(text, EditFormat::Tools);
    assert_eq!(found.edits, vec![]);
    assert_eq!(found.remaining_text, text);
}

#[test]
fn the_instructions_are_short_and_show_the_format() {
    assert_eq!(instructions(EditFormat::Tools), "");
    let sr = instructions(EditFormat::SearchReplace);
    assert!(
        sr.contains("<<<<<<< SEARCH") && sr.contains(">>>>>>> REPLACE"),
        "{sr}"
    );
    let wh = instructions(EditFormat::Whole);
    assert!(wh.contains("complete new content"), "{wh}");
    // The example in each is itself a block the parser reads.
    assert_eq!(
        parse_edit_blocks(sr, EditFormat::SearchReplace).edits.len(),
        1
    );
    assert_eq!(parse_edit_blocks(wh, EditFormat::Whole).edits.len(), 1);
    for text in [sr, wh] {
        assert!(text.len() < 600, "{} bytes: {text}", text.len());
    }
}

#[test]
fn fences_inside_a_block_do_not_end_it() {
    let text = "docs/usage.md\n```markdown\n# Usage\n\n```sh\nbosun run\n```\n```\nThat is the file.\n\nREADME.md\n```markdown\n<<<<<<< SEARCH\n```\nold\n```\n=======\n```\nnew\n```\n>>>>>>> REPLACE\n```";
    let found = parse_edit_blocks(text, EditFormat::Whole);
    assert_eq!(
        found.edits,
        vec![
            whole("docs/usage.md", "# Usage\n\n```sh\nbosun run\n```\n"),
            sr("README.md", "```\nold\n```\n", "```\nnew\n```\n"),
        ]
    );
    assert_eq!(found.remaining_text, "That is the file.");
}
