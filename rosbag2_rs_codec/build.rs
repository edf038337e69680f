//! Embeds the bundled `.msg` and `.srv` definitions under `msgs/` into the library.

use std::fmt::Write;
use std::path::Path;

fn main() {
    // Read when the script runs, not baked in when it is compiled: a build script binary can be
    // reused for a checkout elsewhere that shares the target directory.
    let manifest_dir =
        std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let root = Path::new(&manifest_dir).join("msgs");
    println!("cargo:rerun-if-changed={}", root.display());
    let mut entries = Vec::new();
    for pkg in std::fs::read_dir(&root).expect("msgs/ directory") {
        let pkg = pkg.expect("msgs entry").path();
        for kind in ["msg", "srv"] {
            let Ok(files) = std::fs::read_dir(pkg.join(kind)) else {
                continue;
            };
            for file in files {
                let file = file.expect("interface file entry").path();
                if file.extension().is_some_and(|e| e == kind) {
                    let name = format!(
                        "{}/{kind}/{}",
                        pkg.file_name().unwrap().to_string_lossy(),
                        file.file_stem().unwrap().to_string_lossy()
                    );
                    entries.push((name, file));
                }
            }
        }
    }
    entries.sort();
    let mut out = String::from("/// Bundled `(pkg/msg/Type or pkg/srv/Service, file text)` pairs, sorted by name.\npub static BUNDLED: &[(&str, &str)] = &[\n");
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
