//! The installs the README gives, run as a new user runs them
//! (docs/contract.md §5.3): its `### Install` block with a fresh HOME, then
//! `man -w aoitap` and bash's own completion with the PATH that block
//! leaves; and the Python wheel (maturin) in a fresh virtual environment.
//! Each builds with the `quick` profile the suite has already built, so
//! the build is the one the tests ran, not a second one.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::util::*;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The README's install block: the `sh` block after its `install:`
/// marker.
fn install_block() -> String {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let marked = readme
        .find("<!-- install:")
        .expect("the README marks its install block");
    let start = readme[marked..].find("```sh\n").unwrap() + marked + "```sh\n".len();
    let end = readme[start..].find("```").unwrap() + start;
    readme[start..end].to_string()
}

/// A command with nothing of this process's environment but what a new
/// user's shell has: HOME, PATH, and where rustup keeps the toolchain.
fn fresh(program: &str, home: &Path, path: &str) -> Command {
    let mut c = Command::new(program);
    c.env_clear().env("HOME", home).env("PATH", path);
    // cargo and rustup find their homes under HOME unless told: a fresh
    // HOME keeps the user's toolchain and crate cache where they are.
    for (var, default) in [("CARGO_HOME", ".cargo"), ("RUSTUP_HOME", ".rustup")] {
        c.env(var, home_of(var, default));
    }
    c
}

/// This machine's cargo or rustup home: `var`, or `default` under HOME.
fn home_of(var: &str, default: &str) -> PathBuf {
    let real_home = PathBuf::from(std::env::var_os("HOME").unwrap());
    std::env::var_os(var).map_or_else(|| real_home.join(default), PathBuf::from)
}

/// The directory of the `cargo` this suite was built with.
fn cargo_dir() -> PathBuf {
    let cargo = std::env::var_os("CARGO").map_or_else(|| PathBuf::from("cargo"), PathBuf::from);
    let cargo = if cargo.is_absolute() {
        cargo
    } else {
        let out = Command::new("sh")
            .args(["-c", "command -v cargo"])
            .output()
            .unwrap();
        PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
    };
    cargo.parent().unwrap().to_path_buf()
}

/// What bash's own machinery (`complete -p`, then the function it names)
/// offers for `words`, in an interactive shell that read `~/.bashrc`.
fn bash_offers(home: &Path, path: &str, words: &[&str]) -> (Vec<String>, String) {
    let line = words.join(" ");
    let probe = format!(
        "spec=$(complete -p aoitap) || exit 3; func=${{spec##*-F }}; func=${{func%% *}}; \
         COMP_WORDS=({line}); COMP_CWORD={}; COMP_LINE='{line}'; COMP_POINT=${{#COMP_LINE}}; \
         \"$func\" aoitap '{}' '{}'; printf '%s\\n' \"${{COMPREPLY[@]}}\"; \
         type -t _init_completion >/dev/null && echo BASH_COMPLETION_PACKAGE",
        words.len() - 1,
        words[words.len() - 1],
        words[words.len() - 2],
    );
    let out = fresh("bash", home, path)
        .args(["-i", "-c", &probe])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let offered = String::from_utf8_lossy(&out.stdout);
    let said = format!("{out:?}");
    (offered.lines().map(str::to_string).collect(), said)
}

#[test]
fn the_readmes_install_works_with_a_fresh_home() {
    // Where CARGO_HOME is not set (rustup's default), and where it is set
    // elsewhere, as the official Rust images set it.
    for elsewhere in [None, Some("cargo-home")] {
        let home = tempfile::tempdir().unwrap();
        readme_install(home.path(), elsewhere.map(|d| home.path().join(d)));
    }
}

/// The README's install block, run in a fresh `home` with CARGO_HOME
/// `cargo_home` (unset when `None`): the page is where `man` finds it,
/// and bash completes from `~/.bashrc` alone.
fn readme_install(home: &Path, cargo_home: Option<PathBuf>) {
    // The block as written, but for the build: the README builds the
    // release binary; here the suite's own quick build is installed the
    // same way, to the same place. Cargo itself reads the crate cache of
    // this machine's CARGO_HOME.
    let block = install_block();
    let ours = "cargo install --locked --path .";
    assert!(block.starts_with(ours), "{block}");
    let real_cargo_home = home_of("CARGO_HOME", ".cargo");
    let block = block.replacen(
        ours,
        &format!(
            "CARGO_HOME='{}' cargo install --locked --offline --quiet --path . --profile quick \\\n  --root \"${{CARGO_HOME:-$HOME/.cargo}}\"",
            real_cargo_home.display()
        ),
        1,
    );
    let bin_dir = cargo_home.clone().unwrap_or_else(|| home.join(".cargo"));
    let with_cargo_home = |mut c: Command| {
        c.env_remove("CARGO_HOME");
        if let Some(dir) = &cargo_home {
            c.env("CARGO_HOME", dir);
        }
        c
    };
    // PATH as rustup leaves it: $CARGO_HOME/bin on it, before the system's.
    let path = format!(
        "{}:{}:/usr/bin:/bin",
        bin_dir.join("bin").display(),
        cargo_dir().display()
    );
    let out = with_cargo_home(fresh("bash", home, &path))
        .args(["-e", "-c", &block])
        .current_dir(repo())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");

    // What the block leaves: $CARGO_HOME/bin on PATH, nothing else of ours.
    let path = format!("{}:/usr/bin:/bin", bin_dir.join("bin").display());
    let man = with_cargo_home(fresh("man", home, &path))
        .args(["-w", "aoitap"])
        .output()
        .unwrap();
    let page = String::from_utf8_lossy(&man.stdout);
    assert_eq!(
        page.trim(),
        bin_dir.join("share/man/man1/aoitap.1").to_str().unwrap(),
        "{cargo_home:?}: {man:?}"
    );
    assert_eq!(
        std::fs::read_to_string(page.trim()).unwrap(),
        run(&["man"], b"").stdout
    );

    let (offered, said) = bash_offers(home, &path, &["aoitap", "verify", "--allow", "seq."]);
    assert!(offered.iter().any(|o| o == "seq.gap"), "{said}");
    assert!(offered.iter().all(|o| o.starts_with("seq.")), "{said}");
    assert!(
        !offered.iter().any(|o| o == "BASH_COMPLETION_PACKAGE"),
        "the bash-completion package is loaded: this proves nothing without it"
    );
}

/// maturin, where it is installed: `AOITAP_MATURIN`, `maturin` on PATH,
/// or python3's module.
fn maturin() -> Option<Vec<String>> {
    if let Some(m) = std::env::var_os("AOITAP_MATURIN") {
        return Some(vec![m.to_string_lossy().into_owned()]);
    }
    let works = |argv: &[&str]| {
        Command::new(argv[0])
            .args(&argv[1..])
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    [vec!["maturin"], vec!["python3", "-m", "maturin"]]
        .into_iter()
        .find(|argv| works(argv))
        .map(|argv| argv.into_iter().map(str::to_string).collect())
}

#[test]
fn the_wheel_installs_aoitap_and_its_man_page_in_a_virtual_environment() {
    let maturin = maturin();
    if !peer(maturin.is_some(), "maturin") {
        return;
    }
    let maturin = maturin.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let wheels = dir.path().join("wheels");
    let built = Command::new(&maturin[0])
        .args(&maturin[1..])
        .args(["build", "--quiet", "--profile", "quick", "--out"])
        .arg(&wheels)
        .current_dir(repo())
        .output()
        .unwrap();
    assert!(built.status.success(), "{built:?}");
    let wheel = std::fs::read_dir(&wheels)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "whl"))
        .unwrap();

    let venv = dir.path().join("venv");
    let made = Command::new("python3")
        .args(["-m", "venv"])
        .arg(&venv)
        .output()
        .unwrap();
    assert!(made.status.success(), "{made:?}");
    let pip = Command::new(venv.join("bin/pip"))
        .args(["install", "--quiet", "--no-index", "--no-deps"])
        .arg(&wheel)
        .output()
        .unwrap();
    assert!(pip.status.success(), "{pip:?}");

    // The installed binary judges as the built one does.
    let aoitap = venv.join("bin/aoitap");
    for (sample, code) in [("ok-complete.jsonl", 0), ("no-summary.jsonl", 65)] {
        let out = Command::new(&aoitap)
            .arg("verify")
            .arg(fixture("streams").join(sample))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(code), "{sample}: {out:?}");
    }
    // man finds the page beside the environment's bin/ on PATH.
    let home = dir.path().join("home");
    std::fs::create_dir(&home).unwrap();
    let path = format!("{}:/usr/bin:/bin", venv.join("bin").display());
    let man = fresh("man", &home, &path)
        .args(["-w", "aoitap"])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&man.stdout).trim(),
        venv.join("share/man/man1/aoitap.1").to_str().unwrap(),
        "{man:?}"
    );
}
