//! What this build knows about Hermes Agent 0.19.0: plugin kinds, manifest fields, hooks,
//! capabilities, auth providers and built-in tools. One table per fact so checks, consent
//! screens and documentation all read the same list. [`api`]: the plugin API of every release.

pub mod api;
pub mod releases;

/// Plugin kinds Hermes understands; anything else is treated as `standalone`.
pub const KINDS: &[&str] = &[
    "standalone",
    "backend",
    "exclusive",
    "platform",
    "model-provider",
];

/// The category directories of Hermes's plugin layout (`plugins/<category>/<name>/`): those
/// Hermes 0.19.0 ships in its own `plugins/` (read from the installed wheel: `browser`,
/// `context_engine`, `cron_providers`, `dashboard_auth`, `image_gen`, `memory`,
/// `model-providers`, `observability`, `platforms`, `video_gen`, `web`) and the backend
/// categories the plugin guide and real plugins use (`tts`, `transcription`,
/// `computer_use`). Hermes's loader keys a plugin in any directory without a manifest as
/// `<category>/<dir>`; a plugin *installed* from such a directory is keyed the same way.
pub const CATEGORIES: &[&str] = &[
    "browser",
    "computer_use",
    "context_engine",
    "cron_providers",
    "dashboard_auth",
    "image_gen",
    "memory",
    "model-providers",
    "observability",
    "platforms",
    "transcription",
    "tts",
    "video_gen",
    "web",
];

/// Environment variable names Hermes 0.19.0 refuses to write to `.env`
/// (`hermes_cli/config.py` `_ENV_VAR_NAME_DENYLIST`): they change what runs (loaders, Python,
/// Node, shells, editors, git, Hermes's own location).
pub const ENV_DENYLIST: &[&str] = &[
    "LD_PRELOAD",
    "LD_LIBRARY_PATH",
    "LD_AUDIT",
    "LD_DEBUG",
    "DYLD_INSERT_LIBRARIES",
    "DYLD_LIBRARY_PATH",
    "DYLD_FRAMEWORK_PATH",
    "DYLD_FALLBACK_LIBRARY_PATH",
    "DYLD_FALLBACK_FRAMEWORK_PATH",
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONSTARTUP",
    "PYTHONUSERBASE",
    "PYTHONEXECUTABLE",
    "PYTHONNOUSERSITE",
    "NODE_OPTIONS",
    "NODE_PATH",
    "PATH",
    "SHELL",
    "BROWSER",
    "EDITOR",
    "VISUAL",
    "PAGER",
    "GIT_SSH_COMMAND",
    "GIT_EXEC_PATH",
    "GIT_SHELL",
    "HERMES_HOME",
    "HERMES_PROFILE",
    "HERMES_CONFIG",
    "HERMES_ENV",
];

/// The module Hermes imports a directory plugin as (`hermes_cli/plugins.py`
/// `_load_directory_module`): `hermes_plugins.` then the key with `/` as `__` and `-` as `_`.
/// Two keys with one module name overwrite each other in `sys.modules`.
pub fn module_name(key: &str) -> String {
    format!(
        "hermes_plugins.{}",
        key.replace('/', "__").replace('-', "_")
    )
}

/// Operating systems a plugin can declare in `platforms`.
pub const PLATFORMS: &[&str] = &["linux", "macos", "windows"];

/// The newest `manifest_version` this build understands.
pub const SUPPORTED_MANIFEST_VERSION: i64 = 2;

/// `plugin.yaml` fields of manifest v1 (including legacy aliases and reserved names).
pub const MANIFEST_V1_FIELDS: &[&str] = &[
    "name",
    "version",
    "description",
    "author",
    "kind",
    "label",
    "provides_tools",
    "provides_hooks",
    "hooks",
    "provides_middleware",
    "requires_env",
    "optional_env",
    "capabilities",
    "requires_auth",
    "provides_locales",
    "platforms",
    "external_dependencies",
    "provides_web_providers",
    "provides_browser_providers",
    "pip_dependencies",
    "requires_hermes",
    "emits",
    "listens",
    "hermes",
    "depends",
];

/// Fields manifest v2 adds.
pub const MANIFEST_V2_FIELDS: &[&str] = &[
    "manifest_version",
    "api_version",
    "license",
    "homepage",
    "tags",
    "requires_plugins",
    "python_dependencies",
    "config_schema",
    "python_runtime",
];

/// Keys of a rich `requires_env` / `optional_env` entry.
pub const ENV_ENTRY_KEYS: &[&str] = &["name", "description", "url", "prompt", "secret", "password"];

/// `config_schema` types.
pub const CONFIG_TYPES: &[&str] = &[
    "str", "string", "int", "integer", "float", "number", "bool", "boolean", "list", "array",
    "dict", "object", "mapping", "map", "secret",
];

/// Keys of a `config_schema` entry.
pub const CONFIG_ENTRY_KEYS: &[&str] = &[
    "type",
    "default",
    "label",
    "title",
    "description",
    "required",
    "choices",
    "enum",
    "env",
];

/// A capability a plugin can ask consent for (CAP-1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capability {
    /// The id written in `capabilities`.
    pub id: &'static str,
    /// The legacy key under `plugins.entries.<id>.` that grants it.
    pub legacy_key: &'static str,
    /// What granting it allows, in plain words.
    pub risk: &'static str,
}

/// Every capability id Hermes 0.19.0 knows.
pub const CAPABILITIES: &[Capability] = &[
    Capability {
        id: "tools.override",
        legacy_key: "allow_tool_override",
        risk: "replace Hermes' built-in tools (terminal, file access, web) with its own code",
    },
    Capability {
        id: "llm.provider_override",
        legacy_key: "llm.allow_provider_override",
        risk: "send host-owned LLM calls to a provider of its choosing",
    },
    Capability {
        id: "llm.model_override",
        legacy_key: "llm.allow_model_override",
        risk: "choose which model answers host-owned LLM calls",
    },
    Capability {
        id: "llm.agent_id_override",
        legacy_key: "llm.allow_agent_id_override",
        risk: "make LLM calls under another agent's identity",
    },
    Capability {
        id: "llm.profile_override",
        legacy_key: "llm.allow_profile_override",
        risk: "make LLM calls with another profile's settings and credentials",
    },
    Capability {
        id: "llm.task_override",
        legacy_key: "llm.allow_task_override",
        risk: "attach its LLM calls to tasks it did not start",
    },
    Capability {
        id: "gateway.platform_actions",
        legacy_key: "allow_platform_actions",
        risk: "act on messaging platforms (send, edit, react) through the gateway",
    },
    Capability {
        id: "gateway.plugin_status",
        legacy_key: "allow_plugin_status",
        risk: "read the status of other plugins",
    },
];

/// Looks a capability up by id.
pub fn capability(id: &str) -> Option<&'static Capability> {
    CAPABILITIES.iter().find(|c| c.id == id)
}

/// Provider ids a plugin may name in `requires_auth`.
pub const AUTH_PROVIDERS: &[&str] = &["openai-codex"];

/// Locale id shape: lowercase BCP-47-like (`pl`, `pt-br`, `zh-hant`).
pub const LOCALE_ID_PATTERN: &str = r"^[a-z]{2,3}(?:-[a-z0-9]{2,8})*$";

/// The core toolset of Hermes 0.19.0: tool names a plugin may only take with `override=True`
/// and the `tools.override` capability (VAL-12).
pub const BUILTIN_TOOLS: &[&str] = &[
    "browser_back",
    "browser_cdp",
    "browser_click",
    "browser_console",
    "browser_dialog",
    "browser_get_images",
    "browser_navigate",
    "browser_press",
    "browser_scroll",
    "browser_snapshot",
    "browser_type",
    "browser_vision",
    "clarify",
    "close_terminal",
    "computer_use",
    "cronjob",
    "delegate_task",
    "execute_code",
    "ha_call_service",
    "ha_get_state",
    "ha_list_entities",
    "ha_list_services",
    "image_generate",
    "kanban_attach",
    "kanban_attach_url",
    "kanban_attachments",
    "kanban_block",
    "kanban_comment",
    "kanban_complete",
    "kanban_create",
    "kanban_heartbeat",
    "kanban_link",
    "kanban_list",
    "kanban_show",
    "kanban_unblock",
    "memory",
    "patch",
    "process",
    "read_file",
    "read_terminal",
    "search_files",
    "session_search",
    "skill_manage",
    "skill_view",
    "skills_list",
    "terminal",
    "text_to_speech",
    "todo",
    "vision_analyze",
    "web_extract",
    "web_search",
    "write_file",
];

/// Top-level modules of Hermes itself; rebinding anything imported from them is a core
/// override (VAL-14). A package-local module of the same name is the plugin's own.
pub const CORE_MODULES: &[&str] = &[
    "run_agent",
    "agent",
    "tools",
    "hermes_cli",
    "gateway",
    "model_tools",
    "toolsets",
    "providers",
    "plugins",
    "cron",
    "hermes_constants",
    "hermes_state",
    "hermes_logging",
    "hermes_time",
    "hermes_platform",
    "hermes_yaml",
    "batch_runner",
    "toolset_distributions",
    "trajectory_compressor",
    "mcp_serve",
    "acp_adapter",
    "registration_lifecycle",
];
