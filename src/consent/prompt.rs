//! Asking the user. The CLI implements [`Prompter`] on the terminal (hidden input for
//! secrets); non-interactive sessions use [`NoInput`], which never says yes and never
//! supplies a value (CAP-8).

/// Asks the user questions.
pub trait Prompter {
    /// Shows `text`, asks `question`; the default answer is no.
    fn confirm(&mut self, text: &str, question: &str) -> bool;
    /// Asks for a value (`secret`: input hidden); `None` when the user gives nothing.
    fn value(&mut self, text: &str, label: &str, secret: bool) -> Option<String>;
    /// Whether a person can answer at all.
    fn interactive(&self) -> bool;
}

/// The prompter of non-interactive sessions: every answer is no.
#[derive(Debug, Default)]
pub struct NoInput;

impl Prompter for NoInput {
    fn confirm(&mut self, _text: &str, _question: &str) -> bool {
        false
    }

    fn value(&mut self, _text: &str, _label: &str, _secret: bool) -> Option<String> {
        None
    }

    fn interactive(&self) -> bool {
        false
    }
}

/// The sentence every consent screen carries.
pub const NOT_A_SANDBOX: &str = "Consent is a record and a switch, not a sandbox: a plugin runs with your user's rights; granting a capability only lets it use that part of Hermes' API.";
