//! Embeds the bundled `.msg` definitions under `msgs/` into the library.

use std::fmt::Write;
use std::path::Path;

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("msgs");
    println!("cargo:rerun-if-changed={}", root.display());
    let mut entries = Vec::new();
    for pkg in std::fs::read_dir(&root).expect("msgs/ directory") {
        let pkg = pkg.expect("msgs entry").path();
        let Ok(files) = std::fs::read_dir(pkg.join("msg")) else {
            continue;
        };
        for file in files {
            let file = file.expect("msg entry").path();
            if file.extension().is_some_and(|e| e == "msg") {
                let name = format!(
                    "{}/msg/{}",
                    pkg.file_name().unwrap().to_string_lossy(),
                    file.file_stem().unwrap().to_string_lossy()
                );
                entries.push((name, file));
            }
        }
    }
    entries.sort();
    let mut out = String::from("/// Bundled `(type, .msg text)` pairs, sorted by type.\npub static BUNDLED: &[(&str, &str)] = &[\n");
    for (name, file) in entries {
        writeln!(
            out,
            "    ({name:?}, include_str!({:?})),",
            file.display().to_string()
        )
        .unwrap();
    }
    out.push_str("];\n");
    let dest = Path::new(&std::env::var("OUT_DIR").unwrap()).join("bundled_msgs.rs");
    std::fs::write(dest, out).expect("write bundled_msgs.rs");
}
