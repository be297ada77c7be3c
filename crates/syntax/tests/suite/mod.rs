mod first_error;
mod guard;
