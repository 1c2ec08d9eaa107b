//! Synthetic package worlds for the uv-parity tests and the resolve benchmark: a seeded
//! generator of an index (versions, upload times around the quarantine cutoff, dependency
//! ranges that make the resolver backtrack, environment markers), a Hermes core that pins part
//! of it, and plugins that ask for overlapping ranges.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use super::index::Wheel;

/// The fixed "now" of every synthetic world.
pub const NOW: &str = "2026-12-01T00:00:00Z";

/// A small deterministic generator (xorshift64*), so a seed names a world.
pub struct Rng(u64);

impl Rng {
    /// A generator for `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// The next value.
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A value in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    /// True with probability `percent`/100.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

/// A generated world.
pub struct World {
    /// Every wheel the index serves.
    pub wheels: Vec<Wheel>,
    /// Core's `[project].dependencies`.
    pub core_dependencies: Vec<String>,
    /// Core's `uv.lock` pins (name, version): every core package.
    pub core_pins: Vec<(String, String)>,
    /// Plugins: name and `python_dependencies`.
    pub plugins: Vec<(String, Vec<String>)>,
}

/// RFC 3339 for `days_ago` days (and `hour` hours) before [`NOW`].
fn ago(days_ago: i64, hour: i64) -> String {
    let now: jiff::Timestamp = NOW.parse().expect("valid NOW");
    let ts = jiff::Timestamp::from_second(now.as_second() - days_ago * 86_400 + hour * 3_600)
        .expect("valid timestamp");
    ts.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// Versions `1.0.0`, `1.1.0`, … `2.0.0` … for one package.
fn versions(rng: &mut Rng, count: usize) -> Vec<String> {
    let mut out = Vec::new();
    let (mut major, mut minor) = (1, 0);
    for _ in 0..count {
        out.push(format!("{major}.{minor}.0"));
        if rng.chance(30) {
            major += 1;
            minor = 0;
        } else {
            minor += 1;
        }
    }
    out
}

/// A range over `versions`: mostly a lower bound on one of the older half (as real
/// requirements are), sometimes an upper bound or an exclusion, sometimes nothing.
fn range(rng: &mut Rng, versions: &[String]) -> String {
    let older = versions.len().div_ceil(2) as u64;
    let v = &versions[rng.below(older) as usize];
    let major: u64 = v.split('.').next().unwrap().parse().unwrap();
    match rng.below(6) {
        0 | 1 => format!(">={v}"),
        2 => format!(">={v},<{}", major + 1),
        3 => format!("!={}", versions[rng.below(versions.len() as u64) as usize]),
        4 => format!(
            "<={}",
            versions[versions.len() - 1 - rng.below(older) as usize]
        ),
        _ => String::new(),
    }
}

/// Generates a world with `core` core packages, `extra` plugin-only packages and `plugins`
/// plugins.
pub fn world(seed: u64, core: usize, extra: usize, plugins: usize) -> World {
    let mut rng = Rng::new(seed);
    let core_names: Vec<String> = (0..core).map(|i| format!("core-pkg-{i:02}")).collect();
    let extra_names: Vec<String> = (0..extra).map(|i| format!("plugin-lib-{i:02}")).collect();
    let all: Vec<&String> = core_names.iter().chain(extra_names.iter()).collect();
    let all_versions: Vec<Vec<String>> = all
        .iter()
        .map(|_| {
            let n = 2 + rng.below(5) as usize;
            versions(&mut rng, n)
        })
        .collect();

    let mut wheels = Vec::new();
    for (i, name) in all.iter().enumerate() {
        let vs = &all_versions[i];
        // Upload days, oldest first; the newest often lands inside the 14-day window.
        let mut days: Vec<i64> = (0..vs.len()).map(|_| rng.below(120) as i64).collect();
        days.sort_unstable_by(|a, b| b.cmp(a));
        if rng.chance(30) {
            *days.last_mut().unwrap() = rng.below(14) as i64;
        }
        for (k, v) in vs.iter().enumerate() {
            let mut wheel = Wheel::new(name, v, &ago(days[k], (k % 20) as i64));
            // Dependencies only on later packages, so the graph has no cycles.
            for j in (i + 1)..all.len() {
                if rng.chance(8) {
                    let spec = range(&mut rng, &all_versions[j]);
                    let marker = match rng.below(10) {
                        0 => "; python_version < \"3.0\"",
                        1 => "; sys_platform == \"linux\"",
                        _ => "",
                    };
                    wheel = wheel.requires(&format!("{}{spec}{marker}", all[j]));
                }
            }
            if rng.chance(5) {
                wheel = wheel.requires_python(">=3.99");
            }
            wheels.push(wheel);
        }
    }

    let core_dependencies: Vec<String> = core_names
        .iter()
        .enumerate()
        .filter(|(i, _)| i % 3 == 0)
        .map(|(i, n)| format!("{n}{}", range(&mut rng, &all_versions[i])))
        .collect();
    let core_pins: Vec<(String, String)> = core_names
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let vs = &all_versions[i];
            (n.clone(), vs[rng.below(vs.len() as u64) as usize].clone())
        })
        .collect();
    let plugins = (0..plugins)
        .map(|p| {
            let mut deps = Vec::new();
            for _ in 0..(1 + rng.below(3)) {
                let i = rng.below(all.len() as u64) as usize;
                let marker = if rng.chance(10) {
                    "; python_version < \"3.0\""
                } else {
                    ""
                };
                deps.push(format!(
                    "{}{}{marker}",
                    all[i],
                    range(&mut rng, &all_versions[i])
                ));
            }
            (format!("plugin-{p:02}"), deps)
        })
        .collect();
    World {
        wheels,
        core_dependencies,
        core_pins,
        plugins,
    }
}

impl World {
    /// Writes the core checkout (`pyproject.toml` + `uv.lock`) under `dir/core`.
    pub fn write_core(&self, dir: &Path) -> PathBuf {
        let core = dir.join("core");
        std::fs::create_dir_all(&core).unwrap();
        let deps: String = self
            .core_dependencies
            .iter()
            .map(|d| format!("  \"{d}\",\n"))
            .collect();
        std::fs::write(
            core.join("pyproject.toml"),
            format!("[project]\nname = \"hermes-agent\"\nversion = \"0.19.0\"\ndependencies = [\n{deps}]\n"),
        )
        .unwrap();
        let mut lock = String::from(
            "version = 1\nrevision = 2\nrequires-python = \">=3.10\"\n\n[[package]]\nname = \"hermes-agent\"\nversion = \"0.19.0\"\nsource = { editable = \".\" }\n",
        );
        for (name, version) in &self.core_pins {
            lock.push_str(&format!("\n[[package]]\nname = \"{name}\"\nversion = \"{version}\"\nsource = {{ registry = \"https://pypi.org/simple\" }}\n"));
        }
        std::fs::write(core.join("uv.lock"), lock).unwrap();
        core
    }

    /// Writes each plugin (v2 manifest + trivial `register`) under `dir/plugins`.
    pub fn write_plugins(&self, dir: &Path) -> Vec<PathBuf> {
        self.plugins
            .iter()
            .map(|(name, deps)| {
                let p = dir.join("plugins").join(name);
                std::fs::create_dir_all(&p).unwrap();
                let list: String = deps.iter().map(|d| format!("  - '{d}'\n")).collect();
                std::fs::write(
                    p.join("plugin.yaml"),
                    format!("name: {name}\nversion: 1.0.0\ndescription: synthetic plugin\nmanifest_version: 2\npython_dependencies:\n{list}"),
                )
                .unwrap();
                std::fs::write(p.join("__init__.py"), "def register(ctx):\n    pass\n").unwrap();
                p
            })
            .collect()
    }

    /// The requirements as `uv pip compile` reads them: core's, then each plugin's in order.
    pub fn requirements_in(&self) -> String {
        let mut out = String::new();
        for d in &self.core_dependencies {
            out.push_str(d);
            out.push('\n');
        }
        for (_, deps) in &self.plugins {
            for d in deps {
                out.push_str(d);
                out.push('\n');
            }
        }
        out
    }

    /// Core's pins as a requirements file (what `uv pip compile -o` reads as preferences).
    pub fn pins_txt(&self) -> String {
        self.core_pins
            .iter()
            .map(|(n, v)| format!("{n}=={v}\n"))
            .collect()
    }

    /// The quarantine cutoff of every core package for a `days`-day window, RFC 3339.
    pub fn cutoff(days: i64) -> String {
        ago(days, 0)
    }
}

/// The real path of `python3` on PATH (both tools must query the same interpreter).
pub fn python_executable() -> PathBuf {
    let out = std::process::Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3 runs");
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}
