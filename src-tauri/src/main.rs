// Hide the console window on Windows release builds.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() -> std::process::ExitCode {
    let mut args = std::env::args().skip(1);
    // A file chooser's own process (see `chooser`): no window, no database.
    if args.next().as_deref() == Some(recourse_app::CHOOSE_PATH_ARG) {
        return recourse_app::choose_path_child(args.next());
    }
    recourse_app::run();
    std::process::ExitCode::SUCCESS
}
