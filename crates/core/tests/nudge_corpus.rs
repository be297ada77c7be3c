//! The nudge classifier measured on a labelled corpus of final messages (replies without a
//! tool call), the kind small local models write for Python, JavaScript and Rust tasks.
//! `cargo nextest run -p bosun-core -E 'test(/nudge/)' --nocapture` prints the figures.

use bosun_core::nudge::classify;
use bosun_protocol::NudgeReason;

/// The label of a final message: a nudge reason, or `None` for an answer.
struct Case {
    prompt: &'static str,
    reply: &'static str,
    changed: bool,
    label: Option<NudgeReason>,
}

const PLAN: Option<NudgeReason> = Some(NudgeReason::ProsePlan);
const PROMISE: Option<NudgeReason> = Some(NudgeReason::Promise);
const QUESTION: Option<NudgeReason> = Some(NudgeReason::Question);
const ANSWER: Option<NudgeReason> = None;

fn c(prompt: &'static str, reply: &'static str, changed: bool, label: Option<NudgeReason>) -> Case {
    Case {
        prompt,
        reply,
        changed,
        label,
    }
}

fn corpus() -> Vec<Case> {
    vec![
        // Plans in prose, nothing done.
        c(
            "Add a function `mean(xs)` to stats.py that returns the average of a list.",
            "To implement this, I will follow these steps:\n1. Open `stats.py`.\n2. Add a function `mean(xs)` that sums the list and divides by its length.\n3. Handle the empty list by raising ValueError.",
            false,
            PLAN,
        ),
        c(
            "Fix the failing test in tests/test_parser.py",
            "Step 1: Read the failing test to understand what it expects.\nStep 2: Find the bug in parser.py.\nStep 3: Fix it and run pytest.",
            false,
            PLAN,
        ),
        c(
            "Rename the function get_user to fetch_user across the project.",
            "Here's my plan:\n- Search for all uses of `get_user`.\n- Rename the definition in users.py.\n- Update every call site.",
            false,
            PLAN,
        ),
        c(
            "Implement the `slugify` function in utils.js from its docstring.",
            "First, I'll read utils.js to see the docstring, then I'll write the implementation using a regular expression to replace non-alphanumeric characters with dashes.",
            false,
            PLAN,
        ),
        c(
            "Add input validation to the /users POST handler in server.js",
            "You can do this as follows:\n\n1. Open `server.js` and find the POST handler.\n2. Check that `req.body.name` is a non-empty string.\n3. Return a 400 response when it is not.",
            false,
            PLAN,
        ),
        c(
            "Make `parse_config` in src/config.rs return a Result instead of panicking.",
            "* Change the signature to `fn parse_config(s: &str) -> Result<Config, ConfigError>`\n* Replace each `unwrap()` with `?`\n* Update the callers in main.rs to handle the error",
            false,
            PLAN,
        ),
        c(
            "Fix the off-by-one error in pagination.py",
            "Here is the corrected function:\n\n```python\ndef page(items, n, size):\n    start = (n - 1) * size\n    return items[start:start + size]\n```\n\nThis fixes the off-by-one error.",
            false,
            PLAN,
        ),
        c(
            "Convert the callbacks in fs_utils.js to async/await.",
            "Here is the plan:\n1. Import `fs/promises` instead of `fs`.\n2. Make each function `async`.\n3. Replace callbacks with `await`.",
            false,
            PLAN,
        ),
        c(
            "Write a unit test for the `add` function in calc.py",
            "To add a unit test we need to do the following:\n- create tests/test_calc.py\n- import add from calc\n- write a test that asserts add(2, 3) == 5",
            false,
            PLAN,
        ),
        c(
            "Add a --verbose flag to the CLI in cli.py",
            "1. Locate the argparse setup in cli.py\n2. Add `parser.add_argument('--verbose', action='store_true')`\n3. Use `args.verbose` to set the logging level",
            false,
            PLAN,
        ),
        c(
            "Refactor the duplicated code in report.py into a helper.",
            "My plan is to extract the repeated formatting loop into a function called `format_rows` and call it from both places.",
            false,
            PLAN,
        ),
        // Promises: work announced at the end and not done.
        c(
            "Add type hints to utils.py",
            "Sure! I will now add type hints to every function in utils.py.",
            false,
            PROMISE,
        ),
        c(
            "Fix the bug in the `divide` function.",
            "The bug is that `divide` does not check for zero. Let me fix that.",
            false,
            PROMISE,
        ),
        c(
            "Update the README with installation instructions.",
            "I'm going to update the README with a new Installation section.",
            false,
            PROMISE,
        ),
        c(
            "Make the tests pass.",
            "I updated `sum_list` to handle empty lists. Next, I'll run the tests to confirm they pass.",
            true,
            PROMISE,
        ),
        c(
            "Add a `Display` impl for `Point` in geometry.rs",
            "Let me look at geometry.rs first:",
            false,
            PROMISE,
        ),
        c(
            "Fix the lint errors in index.js",
            "There are three lint errors: an unused variable, a missing semicolon and `==` instead of `===`. I'll fix them now.",
            false,
            PROMISE,
        ),
        c(
            "Implement is_prime in primes.py",
            "Okay, I understand the task. Now I will implement the `is_prime` function using trial division up to the square root.",
            false,
            PROMISE,
        ),
        c(
            "Remove the deprecated `old_api` module.",
            "I removed the import of old_api from main.py. Now let me delete the module itself.",
            true,
            PROMISE,
        ),
        c(
            "Add logging to the download function in fetch.py",
            "Understood. I'll add a logger at the top of fetch.py and log each request and failure.",
            false,
            PROMISE,
        ),
        c(
            "Fix the failing test in test_dates.py",
            "The test fails because of a timezone issue. I need to read dates.py to see how the dates are parsed.",
            false,
            PROMISE,
        ),
        // Questions the model could answer itself.
        c(
            "Fix the bug in the login handler.",
            "Could you provide the contents of the file that contains the login handler?",
            false,
            QUESTION,
        ),
        c(
            "Add a test for the parser.",
            "Which file contains the parser?",
            false,
            QUESTION,
        ),
        c(
            "Refactor the database module.",
            "I can refactor it in two ways: split it into smaller modules, or add a repository class. Should I split it into smaller modules?",
            false,
            QUESTION,
        ),
        c(
            "Update the version number.",
            "Do you want me to update the version in package.json or in setup.py?",
            false,
            QUESTION,
        ),
        c(
            "Implement the missing function in lib.rs",
            "Would you like me to implement it with an iterator or with a loop?",
            false,
            QUESTION,
        ),
        c(
            "Fix the import error in app.py",
            "Please provide the full traceback and the contents of app.py.",
            false,
            QUESTION,
        ),
        c(
            "Add error handling to read_config.",
            "Where is read_config defined?",
            false,
            QUESTION,
        ),
        c(
            "Make the build pass.",
            "Can you share the error message you get when you run the build?",
            false,
            QUESTION,
        ),
        c(
            "Add a CHANGELOG entry for the new feature.",
            "Sure. What is the name of the new feature you want me to describe?",
            false,
            QUESTION,
        ),
        // Answers: explanations, summaries of work done, replies to questions.
        c(
            "What does greet() return?",
            "`greet()` returns the string `\"Hello, \" + name + \"!\"`. If no name is given it uses `\"world\"`, so it returns `\"Hello, world!\"`.",
            false,
            ANSWER,
        ),
        c(
            "Explain how the cache in cache.py works.",
            "The cache is a dictionary keyed by the function's arguments. When the function is called, it first checks the dictionary:\n1. If the key is present, return the stored value.\n2. Otherwise compute the value, store it and return it.\nEntries are never evicted, so memory grows with the number of distinct arguments.",
            false,
            ANSWER,
        ),
        c(
            "Why does test_parse fail?",
            "It fails because `parse` strips whitespace before splitting, so the empty field at the end is lost. Should the parser keep empty fields? That is the question the test answers: yes.",
            false,
            ANSWER,
        ),
        c(
            "How do I run the tests?",
            "Run `pytest` from the repository root. I will note that the integration tests need `DATABASE_URL` set; without it they are skipped.",
            false,
            ANSWER,
        ),
        c(
            "Add a `mean` function to stats.py",
            "I added `mean(xs)` to stats.py. It returns the sum divided by the length and raises ValueError for an empty list.",
            true,
            ANSWER,
        ),
        c(
            "Fix the off-by-one error in pagination.py",
            "Fixed: `start` is now `(n - 1) * size`, so page 1 starts at the first item. I ran the tests and they pass.",
            true,
            ANSWER,
        ),
        c(
            "Rename get_user to fetch_user.",
            "Done. I renamed the function and updated its 4 call sites:\n- users.py\n- api.py\n- tests/test_users.py\n- cli.py",
            true,
            ANSWER,
        ),
        c(
            "Add type hints to utils.py",
            "I added type hints to all five functions in utils.py. Would you like me to add them to the tests as well?",
            true,
            ANSWER,
        ),
        c(
            "Make `parse_config` return a Result.",
            "Changed `parse_config` to return `Result<Config, ConfigError>` and updated main.rs to print the error and exit. Simple, right?",
            true,
            ANSWER,
        ),
        c(
            "Fix the failing test in test_math.py",
            "The test already passes: the failure was caused by a stale `.pyc` file. No change is needed in the code.",
            false,
            ANSWER,
        ),
        c(
            "Is there any SQL injection risk in db.py?",
            "Yes. `find_user` builds its query with an f-string. I would use a parameterised query instead: `cursor.execute(\"SELECT * FROM users WHERE name = ?\", (name,))`. Let me know if you want me to change it.",
            false,
            ANSWER,
        ),
        c(
            "Describe the architecture of this project.",
            "The project has three layers:\n1. `api/` handles HTTP requests.\n2. `services/` holds the business logic.\n3. `db/` wraps the database.\nI'll add that the layers only call downwards.",
            false,
            ANSWER,
        ),
        c(
            "Add a docstring to the `area` function.",
            "I added a docstring to `area` explaining its parameters and return value. If you want, I will also add examples to it.",
            true,
            ANSWER,
        ),
        c(
            "Where is the retry logic implemented?",
            "The retry logic is in `src/http.rs`, in `fetch_with_retry`. It retries three times with exponential backoff. Which file should you read next? `src/backoff.rs`, which computes the delays.",
            false,
            ANSWER,
        ),
        c(
            "Update the dependency versions in package.json",
            "I updated `express` to 4.19.2 and `lodash` to 4.17.21 in package.json. I also regenerated package-lock.json. Let me know if anything else is needed.",
            true,
            ANSWER,
        ),
        c(
            "What is the time complexity of sort_items?",
            "It is O(n log n): it calls `sorted` once. I will mention that the key function is called once per item, so it adds O(n).",
            false,
            ANSWER,
        ),
        c(
            "Can you explain what the `?` operator does in main.rs?",
            "The `?` operator returns early with the error if the `Result` is `Err`, converting it with `From`. Otherwise it unwraps the `Ok` value.",
            false,
            ANSWER,
        ),
        c(
            "Fix the typo in the error message in auth.js",
            "I fixed the typo: \"Invlaid password\" is now \"Invalid password\" in auth.js.",
            true,
            ANSWER,
        ),
        c(
            "Remove the unused imports in app.py",
            "I removed `os` and `re`, which were imported but never used. Everything else in app.py is used.",
            true,
            ANSWER,
        ),
        c(
            "Does the project have tests for the CSV exporter?",
            "No. There are tests for the JSON exporter in tests/test_json.py, but none for the CSV one. Should I write some? I can if you ask.",
            false,
            ANSWER,
        ),
        // Written after the rule was: 7 of these 10 were right at first; "should the", "do you
        // know" and "I will leave" were then added to the rule.
        c(
            "Add a `--dry-run` option to deploy.py",
            "I'll start by reading deploy.py to find where the options are parsed.",
            false,
            PROMISE,
        ),
        c(
            "Make the `Stack` struct generic over its element type.",
            "To make `Stack` generic:\n1. Change `struct Stack` to `struct Stack<T>`.\n2. Replace `i32` with `T` in the methods.\n3. Update the tests.",
            false,
            PLAN,
        ),
        c(
            "Fix the crash when the config file is missing.",
            "Do you know where the config file is loaded?",
            false,
            QUESTION,
        ),
        c(
            "Add a test for `parse_date` with an invalid string.",
            "I added `test_parse_date_invalid` to tests/test_dates.py; it checks that a ValueError is raised.",
            true,
            ANSWER,
        ),
        c(
            "How is authentication handled in this app?",
            "Authentication uses JWTs: `login` in auth.js signs a token with the secret from `JWT_SECRET`, and the `requireAuth` middleware verifies it on every protected route. Let me know if you want more detail:",
            false,
            ANSWER,
        ),
        c(
            "Sort the imports in main.py",
            "The imports in main.py are already sorted alphabetically, so there is nothing to change.",
            false,
            ANSWER,
        ),
        c(
            "Implement `fibonacci(n)` in math_utils.js",
            "Sure, here's the updated code:\n\n```javascript\nfunction fibonacci(n) {\n  return n < 2 ? n : fibonacci(n - 1) + fibonacci(n - 2);\n}\n```",
            false,
            PLAN,
        ),
        c(
            "Update the copyright year in LICENSE.",
            "I updated the copyright year in LICENSE to 2026. I will leave the other files alone since they have no year.",
            true,
            ANSWER,
        ),
        c(
            "Add retries to the HTTP client.",
            "Should the client retry on 5xx responses only, or on timeouts too?",
            false,
            QUESTION,
        ),
        c(
            "Delete the unused `helpers.rs` module.",
            "Next I will remove `mod helpers;` from lib.rs and delete the file.",
            false,
            PROMISE,
        ),
    ]
}

fn name(label: Option<NudgeReason>) -> &'static str {
    label.map(|r| r.as_str()).unwrap_or("answer")
}

#[test]
fn nudge_classifier_precision_and_recall_on_the_corpus() {
    let cases = corpus();
    assert!(cases.len() >= 40, "the corpus has {} messages", cases.len());
    let classes = [PLAN, PROMISE, QUESTION, ANSWER];
    let mut wrong = Vec::new();
    let got: Vec<Option<NudgeReason>> = cases
        .iter()
        .map(|k| classify(k.prompt, k.reply, k.changed))
        .collect();
    for (k, g) in cases.iter().zip(&got) {
        if *g != k.label {
            wrong.push(format!(
                "  expected {}, got {}: {:?}",
                name(k.label),
                name(*g),
                k.reply
            ));
        }
    }
    let ratio = |num: usize, den: usize| {
        if den == 0 {
            1.0
        } else {
            num as f64 / den as f64
        }
    };
    println!(
        "nudge classifier on {} final messages (precision / recall):",
        cases.len()
    );
    for class in classes {
        let tp = cases
            .iter()
            .zip(&got)
            .filter(|(k, g)| k.label == class && **g == class)
            .count();
        let predicted = got.iter().filter(|g| **g == class).count();
        let actual = cases.iter().filter(|k| k.label == class).count();
        println!(
            "  {:<10} {:.2} / {:.2}  ({tp} right of {predicted} said, {actual} labelled)",
            name(class),
            ratio(tp, predicted),
            ratio(tp, actual)
        );
    }
    // Overall, over nudges: a nudge of the right reason is a true positive.
    let tp = cases
        .iter()
        .zip(&got)
        .filter(|(k, g)| k.label.is_some() && **g == k.label)
        .count();
    let predicted = got.iter().filter(|g| g.is_some()).count();
    let actual = cases.iter().filter(|k| k.label.is_some()).count();
    let (precision, recall) = (ratio(tp, predicted), ratio(tp, actual));
    println!(
        "  overall    {precision:.2} / {recall:.2}  (nudges: {tp} right of {predicted} said, {actual} labelled)"
    );
    if !wrong.is_empty() {
        println!("misclassified:\n{}", wrong.join("\n"));
    }
    assert!(precision >= 0.9, "precision {precision:.2}");
    assert!(recall >= 0.8, "recall {recall:.2}");
    // Answering a question is never nudged.
    for (k, g) in cases.iter().zip(&got) {
        if bosun_core::nudge::prompt_is_question(k.prompt) {
            assert_eq!(*g, None, "a question's answer was nudged: {:?}", k.reply);
        }
    }
}

#[test]
fn a_claim_of_an_unmade_change_is_told_from_an_answer() {
    use bosun_core::nudge::claims_unmade_change;
    let fix = "Fix the median in stats.py";
    for claim in [
        "I fixed the median function in stats.py.",
        "I have updated README.md as asked.",
        "The function has been corrected.",
        "I made the change to `nested.py` as documented.",
    ] {
        assert!(claims_unmade_change(fix, claim, false), "{claim}");
        assert!(
            !claims_unmade_change(fix, claim, true),
            "a change was made: {claim}"
        );
    }
    for not_claim in [
        "The median is computed by sorting the values.",
        "Sorry, I cannot help with that.",
        "I could not find stats.py.",
        // A command's work changes no file: "done" is no claim about one.
        "done",
    ] {
        assert!(!claims_unmade_change(fix, not_claim, false), "{not_claim}");
    }
    assert!(!claims_unmade_change(
        "What does median() do?",
        "I fixed nothing; it sorts.",
        false
    ));
}

#[test]
fn a_request_to_explain_is_a_question() {
    use bosun_core::nudge::prompt_is_question;
    for q in [
        "Can you explain a.py?",
        "Could you tell me what f returns",
        "Please explain what f returns",
        "please describe the layout",
    ] {
        assert!(prompt_is_question(q), "{q}");
    }
    for r in [
        "Can you fix a.py?",
        "Please rename f to g",
        "Could you add a test",
        // An identifier that starts like a question word is one word.
        "is_leap() in dates.py says 1900 was a leap year, and test_dates.py fails. Fix it.",
        "does_exist() returns the wrong answer; fix it",
        // A later sentence that asks for a change.
        "What a mess: median() is wrong for even lists. Make it right.",
    ] {
        assert!(!prompt_is_question(r), "{r}");
    }
    for q in [
        "Is add() in calc.py right?",
        "is_leap() looks odd. Why does it check 100?",
        "How does the fix in median() work?",
    ] {
        assert!(prompt_is_question(q), "{q}");
    }
}
