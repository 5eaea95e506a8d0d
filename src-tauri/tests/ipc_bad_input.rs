//! Every IPC command driven through Tauri's real invoke path (the mock
//! runtime, the app's own command registry and state) with bad input: a
//! malformed payload is refused before it reaches the engine, naming the
//! argument; a well-formed but invalid one comes back as the one error shape
//! `{code, message, fields}`; and nothing is written by a refused call.

use recourse::engine::{Engine, EngineOptions};
use recourse_app::{AppState, EngineCell};
use serde_json::{json, Value};
use tauri::ipc::{CallbackFn, InvokeBody};
use tauri::test::{get_ipc_response, mock_builder, MockRuntime, INVOKE_KEY};
use tauri::webview::InvokeRequest;
use tauri::{Manager, WebviewWindow, WebviewWindowBuilder};

struct App {
    _app: tauri::App<MockRuntime>,
    window: WebviewWindow<MockRuntime>,
    dir: tempfile::TempDir,
}

impl App {
    /// The app's command registry, state and capabilities on a fresh
    /// database with the demo profile, as `recourse_app::run` wires them
    /// (without the notification plugin and event forwarding, which no
    /// command here needs).
    fn start() -> App {
        let dir = tempfile::tempdir().unwrap();
        let db_path = dir.path().join("recourse.db");
        let engine =
            tauri::async_runtime::block_on(Engine::open(&db_path, EngineOptions::default()))
                .expect("engine opens");
        let app = mock_builder()
            .invoke_handler(recourse_app::specta_builder::<MockRuntime>().invoke_handler())
            .manage(AppState::new(
                EngineCell::ready(engine),
                db_path,
                dir.path().join("logs"),
            ))
            // The app's real context: its capabilities decide what the
            // window may call, as in the shipped app.
            .build(tauri::generate_context!("../tauri.conf.json"))
            .expect("mock app builds");
        let window = WebviewWindowBuilder::new(&app, "main", Default::default())
            .build()
            .expect("mock window");
        App {
            _app: app,
            window,
            dir,
        }
    }

    /// Invokes `cmd` with `args` as the UI would; `Err` is what the UI's
    /// promise rejects with.
    fn invoke(&self, cmd: &str, args: Value) -> Result<Value, Value> {
        self.invoke_from("tauri://localhost", cmd, args)
    }

    /// Invokes `cmd` from a frame at `origin`.
    fn invoke_from(&self, origin: &str, cmd: &str, args: Value) -> Result<Value, Value> {
        get_ipc_response(
            &self.window,
            InvokeRequest {
                cmd: cmd.into(),
                callback: CallbackFn(0),
                error: CallbackFn(1),
                url: origin.parse().unwrap(),
                body: InvokeBody::Json(args),
                headers: Default::default(),
                invoke_key: INVOKE_KEY.to_string(),
            },
        )
        .map(|body| body.deserialize::<Value>().expect("a JSON reply"))
    }

    fn ok(&self, cmd: &str, args: Value) -> Value {
        self.invoke(cmd, args)
            .unwrap_or_else(|e| panic!("{cmd} should succeed, got {e}"))
    }

    /// Tauri's own refusal of a payload that does not deserialize: a string
    /// naming the command and the argument.
    fn refused(&self, cmd: &str, args: Value) -> String {
        match self.invoke(cmd, args) {
            Err(Value::String(message)) => message,
            other => panic!("{cmd} should be refused as malformed, got {other:?}"),
        }
    }

    /// The app's error shape.
    fn error(&self, cmd: &str, args: Value) -> (String, String, Value) {
        match self.invoke(cmd, args) {
            Err(Value::Object(e)) => {
                assert_eq!(
                    e.keys().collect::<Vec<_>>(),
                    ["code", "fields", "message"],
                    "the one IPC error shape, nothing more: {e:?}"
                );
                (
                    e["code"].as_str().unwrap().to_string(),
                    e["message"].as_str().unwrap().to_string(),
                    e["fields"].clone(),
                )
            }
            other => panic!("{cmd} should fail with the app's error shape, got {other:?}"),
        }
    }

    fn demo_profile(&self) -> Value {
        self.ok("list_profiles", json!({}))[0].clone()
    }

    fn stop(self) {
        let engine = self.window.state::<AppState>().engine_now().unwrap();
        tauri::async_runtime::block_on(engine.shutdown());
        drop(self.dir);
    }
}

fn policy(max_retries: u32) -> Value {
    let section = json!({
        "wait_for_reset": { "enabled": false, "max_wait_seconds": 0 },
        "retry": { "enabled": true, "max_retries": max_retries, "initial_interval_seconds": 5 },
        "on_exhausted": "skip"
    });
    json!({ "transient": section, "hard": section })
}

fn candidate(name: &str, max_retries: u32) -> Value {
    json!({
        "id": null,
        "name": name,
        "enabled": true,
        "agent": { "kind": "simulated", "script": [{ "outcome": "succeed", "after_ms": 10 }] },
        "policy": policy(max_retries)
    })
}

#[test]
fn missing_and_mistyped_arguments_are_refused_naming_the_argument() {
    let app = App::start();
    let cases = [
        ("route_detail", json!({}), "invalid args `id` for command `route_detail`: command route_detail missing required key id"),
        ("route_detail", json!({ "id": "7" }), "invalid args `id` for command `route_detail`: invalid type: string \"7\", expected u32"),
        ("route_detail", json!({ "id": -1 }), "invalid args `id` for command `route_detail`: invalid value: integer `-1`, expected u32"),
        ("route_detail", json!({ "id": 1.5 }), "invalid args `id` for command `route_detail`: invalid type: floating point `1.5`, expected u32"),
        ("route_detail", json!({ "id": 4_294_967_296u64 }), "invalid args `id` for command `route_detail`: invalid value: integer `4294967296`, expected u32"),
        ("create_profile", json!({ "name": null }), "invalid args `name` for command `create_profile`: invalid type: null, expected a string"),
        ("rename_profile", json!({ "id": 1 }), "invalid args `name` for command `rename_profile`: command rename_profile missing required key name"),
        ("delete_profile", json!({ "id": true }), "invalid args `id` for command `delete_profile`: invalid type: boolean `true`, expected u32"),
        ("export_fixture", json!({ "routeId": 1 }), "invalid args `attempt` for command `export_fixture`: command export_fixture missing required key attempt"),
        ("classify_text", json!({ "input": "boom" }), "invalid args `input` for command `classify_text`: invalid type: string \"boom\", expected struct PlaygroundInput"),
    ];
    for (cmd, args, expected) in cases {
        assert_eq!(app.refused(cmd, args.clone()), expected, "{cmd} {args}");
    }
    app.stop();
}

#[test]
fn unknown_variants_and_fields_in_nested_input_are_refused() {
    let app = App::start();
    let request = |action: &str| json!({ "request": { "route_id": 1, "action": action, "expected_generation": 1 } });
    let message = app.refused("route_action", request("explode"));
    assert!(
        message.starts_with("invalid args `request` for command `route_action`: unknown variant `explode`, expected one of `retry_now`, `skip_now`, `cancel_wait`, `stop`, `resume`"),
        "{message}"
    );
    let mut extra = policy(3);
    extra["transient"]["retry"]["jitter"] = json!(true);
    let message = app.refused("check_policy", json!({ "index": 0, "policy": extra }));
    assert!(
        message.starts_with(
            "invalid args `policy` for command `check_policy`: unknown field `jitter`"
        ),
        "a policy field the app does not know is refused, not ignored: {message}"
    );
    let message = app.refused(
        "preview_policy",
        json!({ "candidates": [], "failures": [{ "code": "made_up_code" }] }),
    );
    assert!(
        message.starts_with(
            "invalid args `failures` for command `preview_policy`: unknown variant `made_up_code`"
        ),
        "{message}"
    );
    let mut bad_agent = candidate("a", 3);
    bad_agent["agent"]["kind"] = json!("skynet");
    let profile = app.demo_profile();
    let message = app.refused(
        "save_candidates",
        json!({ "profileId": profile["id"], "expectedRevision": profile["revision"], "candidates": [bad_agent] }),
    );
    assert!(
        message.starts_with(
            "invalid args `candidates` for command `save_candidates`: unknown variant `skynet`"
        ),
        "{message}"
    );
    assert_eq!(
        app.demo_profile(),
        profile,
        "a refused save leaves the profile exactly as it was"
    );
    app.stop();
}

#[test]
fn engine_refusals_cross_as_code_message_and_fields() {
    let app = App::start();
    let profile = app.demo_profile();
    let id = profile["id"].clone();
    let revision = profile["revision"].clone();

    assert_eq!(
        app.error("create_profile", json!({ "name": "  " })),
        (
            "validation".into(),
            "name: a profile needs a name".into(),
            json!([{ "path": "name", "message": "a profile needs a name" }])
        )
    );
    assert_eq!(
        app.error("rename_profile", json!({ "id": 99, "name": "x" })),
        (
            "not_found".into(),
            "profile 99 does not exist".into(),
            json!([])
        )
    );
    assert_eq!(
        app.error("delete_profile", json!({ "id": 99 })),
        (
            "not_found".into(),
            "profile 99 does not exist".into(),
            json!([])
        )
    );
    assert_eq!(
        app.error("route_detail", json!({ "id": 7 })),
        (
            "not_found".into(),
            "route 7 does not exist".into(),
            json!([])
        )
    );
    let (code, message, fields) = app.error(
        "save_candidates",
        json!({ "profileId": id, "expectedRevision": revision, "candidates": [candidate("a", 3), candidate("b", 0)] }),
    );
    assert_eq!(
        (code.as_str(), fields[0]["path"].as_str()),
        (
            "validation",
            Some("candidates[1].transient.retry.max_retries")
        ),
        "{message}"
    );
    assert!(
        message.starts_with("Candidate 2 “b” › Transient › Retries: must be 1–10"),
        "the message a person reads names the candidate and field in words: {message}"
    );
    let (code, message, _) = app.error(
        "save_candidates",
        json!({ "profileId": id, "expectedRevision": 0, "candidates": [candidate("a", 3)] }),
    );
    assert_eq!(code, "conflict", "an old revision is a conflict: {message}");
    assert_eq!(app.demo_profile(), profile, "refused saves write nothing");
    assert_eq!(
        app.error(
            "start_run",
            json!({ "request": { "profile_id": id, "prompt": " ", "cwd": null } })
        ),
        (
            "validation".into(),
            "prompt: the prompt is empty".into(),
            json!([{ "path": "prompt", "message": "the prompt is empty" }])
        )
    );
    assert_eq!(
        app.error(
            "start_run",
            json!({ "request": { "profile_id": id, "prompt": "go", "cwd": "/nonexistent/dir" } })
        ),
        (
            "validation".into(),
            "cwd: /nonexistent/dir does not exist".into(),
            json!([{ "path": "cwd", "message": "/nonexistent/dir does not exist" }])
        )
    );
    let all = json!({ "query": { "filter": "all", "search": "", "before": null, "limit": 100 } });
    assert_eq!(
        app.ok("list_routes", all)["routes"],
        json!([]),
        "no refused run made a route"
    );
    assert_eq!(
        app.error(
            "list_routes",
            json!({ "query": { "filter": "all", "search": "", "before": null, "limit": 0 } })
        ),
        (
            "validation".into(),
            "limit: must be 1 to 500 routes per page (0 is too few)".into(),
            json!([{ "path": "limit", "message": "must be 1 to 500 routes per page (0 is too few)" }])
        ),
        "a page size out of range is refused at its field"
    );
    assert_eq!(
        app.error("classify_text", json!({ "input": { "provider": "generic", "message": "boom", "http_status": 42, "headers": {} } })),
        (
            "validation".into(),
            "http_status: HTTP status must be 100–599 (42 is not an HTTP status)".into(),
            json!([{ "path": "http_status", "message": "HTTP status must be 100–599 (42 is not an HTTP status)" }])
        )
    );
    assert_eq!(
        app.error("export_fixture", json!({ "routeId": 5, "attempt": 1 })),
        (
            "not_found".into(),
            "unclassified evidence of route/attempt 5/1 does not exist".into(),
            json!([])
        )
    );
    app.stop();
}

#[test]
fn a_stale_action_is_refused_and_reports_the_current_generation() {
    let app = App::start();
    let profile = app.demo_profile();
    let route = app.ok(
        "start_run",
        json!({ "request": { "profile_id": profile["id"], "prompt": "Rename the config loader", "cwd": null } }),
    );
    let stale = route["generation"].as_u64().unwrap() + 5;
    let (code, message, fields) = app.error(
        "route_action",
        json!({ "request": { "route_id": route["id"], "action": "stop", "expected_generation": stale, "confirm_repeat": false } }),
    );
    assert_eq!((code.as_str(), fields), ("stale", json!([])));
    assert!(
        message.starts_with("the route changed: it "),
        "the person is told to look again: {message}"
    );
    let (code, message, _) = app.error(
        "route_action",
        json!({ "request": { "route_id": 999, "action": "stop", "expected_generation": 1, "confirm_repeat": false } }),
    );
    assert_eq!(
        (code.as_str(), message.as_str()),
        ("not_found", "route 999 does not exist")
    );
    app.stop();
}

#[test]
fn check_policy_reports_every_field_error_instead_of_failing() {
    let app = App::start();
    let errors = app.ok("check_policy", json!({ "index": 2, "policy": policy(0) }));
    let paths: Vec<&str> = errors
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        paths,
        [
            "candidates[2].transient.retry.max_retries",
            "candidates[2].hard.retry.max_retries"
        ],
        "both classes' errors, addressed by the candidate index the UI sent"
    );
    app.stop();
}

#[test]
fn a_page_from_another_origin_cannot_call_any_command() {
    let app = App::start();
    let reply = app.invoke_from("https://example.com", "list_profiles", json!({}));
    assert_eq!(
        reply,
        Err(json!("list_profiles not allowed. Plugin not found")),
        "remote content never reaches the app's commands"
    );
    assert!(
        app.invoke("list_profiles", json!({})).is_ok(),
        "the same call from the app's own origin is answered"
    );
    app.stop();
}

#[test]
fn a_profile_exported_to_a_file_previews_and_imports_through_ipc() {
    let app = App::start();
    let demo = app.demo_profile();
    let file = app.dir.path().join("demo.json");
    let path = file.to_str().unwrap();
    app.ok("export_profile", json!({"id": demo["id"], "path": path}));
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains("\"name\": \"Demo (simulated)\""), "{text}");

    let same = app.ok("preview_profile_file", json!({"path": path}));
    assert_eq!(same["existing"]["id"], demo["id"]);
    assert_eq!(
        same["changes"],
        json!([]),
        "an unchanged file changes nothing"
    );

    std::fs::write(
        &file,
        text.replacen("\"max_retries\": 3", "\"max_retries\": 4", 1),
    )
    .unwrap();
    let preview = app.ok("preview_profile_file", json!({"path": path}));
    assert_eq!(preview["changes"].as_array().unwrap().len(), 1, "{preview}");
    assert_eq!(preview["changes"][0]["before"], "3");
    assert_eq!(preview["changes"][0]["after"], "4");

    // An edit saved meanwhile makes the preview's revision stale.
    let candidates = app.demo_profile()["candidates"].clone();
    app.ok(
        "save_candidates",
        json!({"profileId": demo["id"], "expectedRevision": demo["revision"], "candidates": candidates}),
    );
    let (code, message, _) = app.error(
        "import_profile",
        json!({"documentJson": preview["document_json"], "replace": preview["existing"]}),
    );
    assert_eq!(code, "conflict");
    assert!(message.contains("changed elsewhere"), "{message}");

    let fresh = app.ok("preview_profile_file", json!({"path": path}));
    let saved = app.ok(
        "import_profile",
        json!({"documentJson": fresh["document_json"], "replace": fresh["existing"]}),
    );
    assert_eq!(saved["id"], demo["id"], "replaced in place");

    let copy = app.ok(
        "duplicate_profile",
        json!({"id": demo["id"], "name": "Demo copy"}),
    );
    assert_eq!(copy["candidates"].as_array().unwrap().len(), 3);
    app.stop();
}

#[test]
fn an_oversized_or_invalid_profile_file_is_refused_at_its_field_and_nothing_is_written() {
    let app = App::start();
    let big = app.dir.path().join("big.json");
    std::fs::write(&big, vec![b' '; 1024 * 1024 + 1]).unwrap();
    let (code, message, fields) = app.error(
        "preview_profile_file",
        json!({"path": big.to_str().unwrap()}),
    );
    assert_eq!(code, "validation");
    assert_eq!(fields[0]["path"], "file");
    assert!(
        message.ends_with("larger than 1 MiB; refusing to read it"),
        "{message}"
    );

    let (code, _, fields) = app.error(
        "import_profile",
        json!({"documentJson": "{\"version\": 1, \"name\": \"\", \"candidates\": []}", "replace": null}),
    );
    assert_eq!(code, "validation");
    let paths: Vec<&str> = fields
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["name", "candidates"], "every problem at its field");
    assert_eq!(
        app.ok("list_profiles", json!({})).as_array().unwrap().len(),
        1,
        "nothing was written"
    );
    app.stop();
}
