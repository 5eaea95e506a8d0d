fn main() {
    // tauri.conf.json lives at the repository root, beside this crate.
    tauri_build::try_build(tauri_build::Attributes::new().config_path("../tauri.conf.json"))
        .expect("tauri build script failed");
}
