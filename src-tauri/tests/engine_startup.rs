//! The window first, the engine behind it: on Tauri's mock runtime with the
//! app's own command registry, commands wait for an engine that opens late,
//! the route list is read from the file before it is open (and the open
//! waits for that first list), and an engine that fails to open reaches
//! every caller as the app's error shape.

use std::sync::mpsc;
use std::time::Duration;

use recourse::engine::{Engine, EngineOptions, StartRun};
use recourse_app::{AppState, EngineCell, EngineOpening, IpcError};
use serde_json::{json, Value};
use tauri::ipc::{CallbackFn, InvokeBody};
use tauri::test::{get_ipc_response, mock_builder, MockRuntime, INVOKE_KEY};
use tauri::webview::InvokeRequest;
use tauri::{WebviewWindow, WebviewWindowBuilder};

/// The app with an engine that has not opened yet, on the database at `db_path`.
fn starting_app(
    db_path: std::path::PathBuf,
) -> (
    tauri::App<MockRuntime>,
    WebviewWindow<MockRuntime>,
    EngineOpening,
) {
    let (cell, opening) = EngineCell::opening();
    let log_dir = db_path.with_file_name("logs");
    let app = mock_builder()
        .invoke_handler(recourse_app::specta_builder::<MockRuntime>().invoke_handler())
        .manage(AppState::new(cell, db_path, log_dir))
        .build(tauri::generate_context!("../tauri.conf.json"))
        .expect("mock app builds");
    let window = WebviewWindowBuilder::new(&app, "main", Default::default())
        .build()
        .expect("mock window");
    (app, window, opening)
}

fn invoke(window: &WebviewWindow<MockRuntime>, cmd: &str, args: Value) -> Result<Value, Value> {
    get_ipc_response(
        window,
        InvokeRequest {
            cmd: cmd.into(),
            callback: CallbackFn(0),
            error: CallbackFn(1),
            url: "tauri://localhost".parse().unwrap(),
            body: InvokeBody::Json(args),
            headers: Default::default(),
            invoke_key: INVOKE_KEY.to_string(),
        },
    )
    .map(|body| body.deserialize::<Value>().expect("a JSON reply"))
}

/// Invokes `cmd` on another thread; the reply arrives on the receiver.
fn invoke_later(
    window: &WebviewWindow<MockRuntime>,
    cmd: &'static str,
) -> mpsc::Receiver<Result<Value, Value>> {
    let (tx, rx) = mpsc::channel();
    let window = window.clone();
    std::thread::spawn(move || {
        let _ = tx.send(invoke(&window, cmd, json!({})));
    });
    rx
}

fn first_page() -> Value {
    json!({ "query": { "filter": "all", "search": "", "before": null, "limit": 100 } })
}

#[test]
fn commands_wait_for_a_late_engine_while_the_route_list_is_read_from_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let db_path = dir.path().join("recourse.db");
    let engine = tauri::async_runtime::block_on(Engine::open(&db_path, EngineOptions::default()))
        .expect("engine opens");
    let profile = engine.list_profiles().unwrap()[0].id;
    let route = tauri::async_runtime::block_on(engine.start_run(StartRun {
        profile_id: profile,
        prompt: "Rename the config loader".into(),
        cwd: None,
    }))
    .expect("a route starts");
    let (_app, window, opening) = starting_app(db_path);

    assert_eq!(
        invoke(&window, "engine_status", json!({})),
        Ok(json!({ "state": "starting" }))
    );
    let page = invoke(&window, "list_routes", first_page()).expect("a page before the engine");
    assert_eq!(
        page["routes"][0]["id"],
        json!(route.id),
        "the route is read from the file while the engine is not open"
    );

    let profiles = invoke_later(&window, "list_profiles");
    assert!(
        profiles.recv_timeout(Duration::from_millis(300)).is_err(),
        "list_profiles waits for the engine"
    );
    opening.finish(Ok(engine.clone()));
    let profiles = profiles
        .recv_timeout(Duration::from_secs(10))
        .expect("list_profiles answers once the engine is open")
        .expect("profiles");
    assert_eq!(profiles[0]["id"], json!(profile));
    assert_eq!(
        invoke(&window, "engine_status", json!({})),
        Ok(json!({ "state": "ready" }))
    );
    tauri::async_runtime::block_on(engine.shutdown());
}

#[test]
fn an_engine_that_fails_to_open_reaches_every_caller_with_its_message() {
    let dir = tempfile::tempdir().unwrap();
    let db_path = dir.path().join("recourse.db");
    std::fs::write(&db_path, vec![b'x'; 8192]).unwrap();
    let open_error =
        tauri::async_runtime::block_on(Engine::open(&db_path, EngineOptions::default()))
            .err()
            .expect("a file that is not a database does not open");
    let (_app, window, opening) = starting_app(db_path);

    let waiting = invoke_later(&window, "list_profiles");
    let open_error = IpcError::from(open_error);
    let message = open_error.message.clone();
    opening.finish(Err(open_error));
    let expected = json!({ "code": "store", "message": message, "fields": [] });
    assert_eq!(
        waiting.recv_timeout(Duration::from_secs(10)).unwrap(),
        Err(expected.clone()),
        "a command waiting for the engine gets its open error"
    );
    assert!(message.contains("is not a Recourse database"), "{message}");
    for cmd in ["route_detail", "list_routes"] {
        let args = if cmd == "list_routes" {
            first_page()
        } else {
            json!({ "id": 1 })
        };
        assert_eq!(invoke(&window, cmd, args), Err(expected.clone()), "{cmd}");
    }
    assert_eq!(
        invoke(&window, "engine_status", json!({})),
        Ok(json!({ "state": "failed", "message": message }))
    );
}

#[test]
fn the_engine_opens_behind_the_window_s_first_route_list() {
    let dir = tempfile::tempdir().unwrap();
    let db_path = dir.path().join("recourse.db");
    let engine = tauri::async_runtime::block_on(Engine::open(&db_path, EngineOptions::default()))
        .expect("engine opens");
    let (_app, window, opening) = starting_app(db_path);
    // What the app's open does first, on a thread of its own.
    let waiting = std::thread::spawn(move || {
        let first =
            tauri::async_runtime::block_on(opening.after_first_list(Duration::from_secs(30)));
        (first, opening)
    });
    invoke(&window, "list_routes", first_page()).expect("a page before the engine");
    let (first, opening) = waiting.join().unwrap();
    assert!(
        first,
        "the open waited for the first list, not for its limit"
    );
    opening.finish(Ok(engine.clone()));
    tauri::async_runtime::block_on(engine.shutdown());
}

#[test]
fn a_window_that_lists_nothing_does_not_hold_the_engine_back_past_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let (_app, _window, opening) = starting_app(dir.path().join("recourse.db"));
    assert!(
        !tauri::async_runtime::block_on(opening.after_first_list(Duration::from_millis(50))),
        "nothing was listed, so the limit ended the wait"
    );
}
