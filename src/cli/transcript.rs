//! `recourse route ID --transcript`: each attempt's whole transcript as
//! text, every stored string escaped for the terminal.

use recourse::controls::escape;

/// One attempt's whole transcript, as text.
pub fn print(t: &recourse::engine::AttemptTranscript) {
    use recourse::agent::Entry;
    let tr = &t.transcript;
    println!();
    println!(
        "attempt {} transcript{}{}",
        t.attempt,
        tr.model
            .as_deref()
            .map(|m| format!(" — model {}", escape(m)))
            .unwrap_or_default(),
        tr.session_id
            .as_deref()
            .map(|s| format!(" — session {}", escape(s)))
            .unwrap_or_default()
    );
    for e in &tr.entries {
        match e {
            Entry::Assistant { text } => {
                for l in text.lines() {
                    println!("  │ {}", escape(l));
                }
            }
            Entry::Tool {
                name,
                summary,
                status,
                detail,
                ..
            } => {
                let status = serde_json::to_value(status)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default();
                println!("  ⚙ {} {} — {status}", escape(name), escape(summary));
                if let Some(d) = detail {
                    println!("      {}", escape(d));
                }
            }
            Entry::Output { stream, text } => {
                println!("  {stream}:");
                for l in text.lines() {
                    println!("  │ {}", escape(l));
                }
            }
            Entry::Elided { entries, bytes } => {
                println!("  … {entries} entries ({bytes} bytes) left out …");
            }
        }
    }
    if let Some(answer) = &tr.answer {
        println!("  answer:");
        for l in answer.lines() {
            println!("  │ {}", escape(l));
        }
    }
    if let Some(f) = &t.files {
        print_files(f);
    }
}

fn print_files(f: &recourse::agent::FilesChanged) {
    let n = f.files.len() as u32 + f.more;
    println!(
        "  changed {n} file{} in {}",
        if n == 1 { "" } else { "s" },
        escape(&f.dir)
    );
    for c in &f.files {
        println!("    {:>2} {}", escape(&c.status), escape(&c.path));
    }
    if f.more > 0 {
        println!("    … and {} more", f.more);
    }
}
