//! Exit statuses (SPEC §10) and the stable error codes every failure carries: `--json` prints
//! them as `error.code`, scripts (and Hermes) branch on them; docs/report-format.md lists them.
//! A code decides its exit status.

/// Exit status of a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// 0: success.
    Ok,
    /// 1: validation failure, refused consent, or resolution conflict.
    Failed,
    /// 2: usage error.
    Usage,
    /// 3: environment error (I/O, network, lock busy, missing interpreter).
    Environment,
}

impl Status {
    /// The process exit code.
    pub fn code(self) -> u8 {
        match self {
            Status::Ok => 0,
            Status::Failed => 1,
            Status::Usage => 2,
            Status::Environment => 3,
        }
    }
}

/// Why a command failed, as a stable identifier.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Code {
    /// Arguments, flags or a name that cannot be used (exit 2).
    Usage,
    /// A plugin, profile, generation number or file that does not exist (exit 2).
    NotFound,
    /// The package does not validate, or cannot be loaded (exit 1).
    Invalid,
    /// The security scan's verdict is `dangerous` (exit 1).
    Dangerous,
    /// Consent is needed and nobody can give it: pass the flag named (exit 1).
    ConsentRequired,
    /// Consent was asked and refused (exit 1).
    ConsentRefused,
    /// No set of versions satisfies everything (exit 1); `details.conflict` explains.
    Conflict,
    /// The catalog's kill list names the plugin (exit 1).
    Removed,
    /// Nothing is published yet (exit 1).
    NoGeneration,
    /// No Hermes core is known: name one (`--core`) or resolve without it (`--no-core`)
    /// (exit 1).
    NoCore,
    /// `--plan HASH` names a consent plan that is no longer what the operation would ask
    /// (exit 1).
    PlanChanged,
    /// A plugin's `requires_hermes` excludes the core's version (`--ignore-requires-hermes`)
    /// (exit 1).
    RequiresHermes,
    /// A plugin's `requires_plugins` names a plugin that is not enabled beside it, or whose
    /// version is out of range (exit 1).
    RequiresPlugins,
    /// `--locked`: the lock would change; `--frozen`: the current lock was resolved for
    /// other requirements, or there is none (exit 1).
    LockChanged,
    /// Any other refusal (exit 1).
    Refused,
    /// Another writer held the lock past `--lock-timeout` (exit 3).
    LockBusy,
    /// A server could not be reached or answered wrongly: git, the package index (exit 3).
    Network,
    /// The Python interpreter could not be found or used (exit 3).
    Interpreter,
    /// Reading or writing files failed: the store, the home, a cache (exit 3).
    Io,
    /// Any other problem of the environment (exit 3).
    Environment,
}

/// An error and the errors below it (its `source()` chain), each as its own words: many
/// libraries end their message with their source's (`failed to fetch: connection refused`),
/// which is cut so each layer says only what it adds. Empty layers are dropped.
pub fn layers(error: &(dyn std::error::Error + 'static)) -> Vec<String> {
    let mut texts = vec![error.to_string()];
    let mut next = error.source();
    while let Some(cause) = next {
        texts.push(cause.to_string());
        next = cause.source();
    }
    let mut out = Vec::new();
    for (i, text) in texts.iter().enumerate() {
        let own = match texts.get(i + 1) {
            Some(below) if !below.is_empty() && text.ends_with(below.as_str()) => text
                [..text.len() - below.len()]
                .trim_end()
                .trim_end_matches([':', '(', '-'])
                .trim_end(),
            _ => text.as_str(),
        };
        if !own.trim().is_empty() && out.last().map(String::as_str) != Some(own) {
            out.push(own.to_string());
        }
    }
    out
}

/// The errors below `error`, as [`layers`] gives them: for `Caused by:` lines and the JSON
/// `causes`.
pub fn causes(error: &(dyn std::error::Error + 'static)) -> Vec<String> {
    let mut all = layers(error);
    if !all.is_empty() {
        all.remove(0);
    }
    all
}

impl Code {
    /// Every code, in documentation order.
    pub const ALL: [Code; 20] = [
        Code::Usage,
        Code::NotFound,
        Code::Invalid,
        Code::Dangerous,
        Code::ConsentRequired,
        Code::ConsentRefused,
        Code::Conflict,
        Code::Removed,
        Code::NoGeneration,
        Code::NoCore,
        Code::PlanChanged,
        Code::RequiresHermes,
        Code::RequiresPlugins,
        Code::LockChanged,
        Code::Refused,
        Code::LockBusy,
        Code::Network,
        Code::Interpreter,
        Code::Io,
        Code::Environment,
    ];

    /// The identifier (`lock-busy`).
    pub fn as_str(self) -> &'static str {
        match self {
            Code::Usage => "usage",
            Code::NotFound => "not-found",
            Code::Invalid => "invalid",
            Code::Dangerous => "dangerous",
            Code::ConsentRequired => "consent-required",
            Code::ConsentRefused => "consent-refused",
            Code::Conflict => "conflict",
            Code::Removed => "removed",
            Code::NoGeneration => "no-generation",
            Code::NoCore => "no-core",
            Code::PlanChanged => "plan-changed",
            Code::RequiresHermes => "requires-hermes",
            Code::RequiresPlugins => "requires-plugins",
            Code::LockChanged => "lock-changed",
            Code::Refused => "refused",
            Code::LockBusy => "lock-busy",
            Code::Network => "network",
            Code::Interpreter => "interpreter",
            Code::Io => "io",
            Code::Environment => "environment",
        }
    }

    /// The exit status this failure ends with.
    pub fn status(self) -> Status {
        match self {
            Code::Usage | Code::NotFound => Status::Usage,
            Code::LockBusy | Code::Network | Code::Interpreter | Code::Io | Code::Environment => {
                Status::Environment
            }
            _ => Status::Failed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Layer(&'static str, Option<Box<Layer>>);

    impl std::fmt::Display for Layer {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.0)
        }
    }

    impl std::error::Error for Layer {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            self.1.as_deref().map(|l| l as _)
        }
    }

    #[test]
    fn layers_say_only_what_each_adds() {
        let refused = Layer("connection refused", None);
        let connect = Layer(
            "tcp connect error: connection refused",
            Some(Box::new(refused)),
        );
        let fetch = Layer("failed to fetch `u`", Some(Box::new(connect)));
        assert_eq!(
            layers(&fetch),
            [
                "failed to fetch `u`",
                "tcp connect error",
                "connection refused"
            ]
        );
        assert_eq!(causes(&fetch), ["tcp connect error", "connection refused"]);
        assert!(causes(&Layer("alone", None)).is_empty());
    }

    #[test]
    fn identifiers_are_unique_and_serialise_as_written() {
        let mut seen = std::collections::BTreeSet::new();
        for code in Code::ALL {
            assert!(seen.insert(code.as_str()), "{code:?}");
            assert_eq!(
                serde_json::to_value(code).unwrap(),
                serde_json::Value::String(code.as_str().into())
            );
        }
    }
}
