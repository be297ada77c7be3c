mod approvals;
mod bad_input;
mod inspect;
mod journal;
mod redaction;
mod retries;
mod run;
mod support;
