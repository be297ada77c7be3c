mod bad_input;
mod inspect;
mod journal;
mod retries;
mod run;
mod support;
