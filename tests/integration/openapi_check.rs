//! Checks answers against the OpenAPI document: a validator for the subset of JSON Schema the
//! generated document uses (`type` with `null`, `enum`, `const`, `properties`, `required`,
//! `additionalProperties`, `propertyNames`, `items`, `minItems`, `oneOf`/`anyOf`/`allOf`,
//! `$ref` into the document, `pattern`, `minimum`/`maximum`), and a plain HTTP client for the
//! daemon's Unix socket. Answers are checked strictly: a property the schema does not name is
//! an error too (undocumented fields are drift), as JSON Schema's
//! `unevaluatedProperties: false` would say.

use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::time::Duration;

use serde_json::Value;

/// An OpenAPI document to check answers against.
pub struct Document {
    json: Value,
}

impl Document {
    /// Reads the document.
    pub fn new(json: Value) -> Document {
        Document { json }
    }

    /// The document as JSON.
    pub fn json(&self) -> &Value {
        &self.json
    }

    /// The response object of a route's status (resolving a `$ref` to a shared response).
    pub fn response(&self, method: &str, template: &str, status: u16) -> &Value {
        let operation = &self.json["paths"][template][method];
        assert!(
            operation.is_object(),
            "{method} {template}: not in the document"
        );
        let answer = &operation["responses"][status.to_string()];
        assert!(
            answer.is_object(),
            "{method} {template}: status {status} is not documented (documented: {:?})",
            operation["responses"]
                .as_object()
                .map(|r| r.keys().collect::<Vec<_>>())
        );
        self.resolve(answer)
    }

    /// The schema of a route's answer of `status` in `content_type`.
    pub fn answer_schema(
        &self,
        method: &str,
        template: &str,
        status: u16,
        content_type: &str,
    ) -> &Value {
        let response = self.response(method, template, status);
        let schema = &response["content"][content_type]["schema"];
        assert!(
            schema.is_object(),
            "{method} {template} {status}: no {content_type} content in {response}"
        );
        schema
    }

    /// A schema of `components.schemas`.
    pub fn component(&self, name: &str) -> &Value {
        let schema = &self.json["components"]["schemas"][name];
        assert!(schema.is_object(), "no schema {name}");
        schema
    }

    /// Checks a route's JSON answer against its documented schema; panics listing every
    /// mismatch with its JSON path.
    pub fn check_json(&self, method: &str, template: &str, status: u16, answer: &Value) {
        let schema = self.answer_schema(method, template, status, "application/json");
        if let Err(errors) = self.validate(schema, answer) {
            panic!(
                "{method} {template} {status}: the answer does not fit the document:\n{errors:#?}\n{answer:#}"
            );
        }
    }

    /// Checks each documented header of a route's answer that the answer carries against its
    /// schema; `always` lists the headers it must carry.
    pub fn check_headers(&self, method: &str, template: &str, answer: &Answer, always: &[&str]) {
        let response = self.response(method, template, answer.status);
        let documented = response["headers"].as_object().cloned().unwrap_or_default();
        for name in always {
            assert!(documented.contains_key(*name), "{name} is not documented");
            assert!(
                answer.header(name).is_some(),
                "{name} missing from the answer"
            );
        }
        for (name, header) in &documented {
            let Some(text) = answer.header(name) else {
                continue;
            };
            let schema = self.resolve(&header["schema"]);
            // Headers are text: read them as the JSON value their schema says.
            let value = match schema["type"].as_str() {
                Some("integer") | Some("number") | Some("boolean") => {
                    serde_json::from_str(text).unwrap_or(Value::String(text.to_string()))
                }
                _ => Value::String(text.to_string()),
            };
            if let Err(errors) = self.validate(&header["schema"], &value) {
                panic!("header {name}: {text:?} does not fit the document: {errors:?}");
            }
        }
    }

    /// Checks `value` against `schema` (a schema of this document); every mismatch, each with
    /// its JSON path (`$.panes[0].status`).
    pub fn validate(&self, schema: &Value, value: &Value) -> Result<(), Vec<String>> {
        let mut errors = Vec::new();
        self.check_location(schema, value, "$", &mut errors);
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors)
        }
    }

    fn resolve<'a>(&'a self, schema: &'a Value) -> &'a Value {
        match schema.get("$ref").and_then(Value::as_str) {
            Some(target) => {
                let found = self
                    .json
                    .pointer(target.trim_start_matches('#'))
                    .unwrap_or_else(|| panic!("$ref {target} resolves to nothing"));
                self.resolve(found)
            }
            None => schema,
        }
    }

    /// Checks a new instance location: the schema, then that every property of an object
    /// was named by some part of it.
    fn check_location(&self, schema: &Value, value: &Value, at: &str, errors: &mut Vec<String>) {
        let evaluated = self.check(schema, value, at, errors);
        if let (Some(object), Some(evaluated)) = (value.as_object(), evaluated) {
            for key in object.keys().filter(|key| !evaluated.contains(*key)) {
                errors.push(format!("{at}.{key}: a property the document does not name"));
            }
        }
    }

    /// Checks one schema at one location; returns the properties it evaluated (`None`: any
    /// property is allowed there).
    fn check(
        &self,
        schema: &Value,
        value: &Value,
        at: &str,
        errors: &mut Vec<String>,
    ) -> Option<BTreeSet<String>> {
        let mut evaluated = Some(BTreeSet::new());
        let merge = |into: &mut Option<BTreeSet<String>>, more: Option<BTreeSet<String>>| match (
            into.as_mut(),
            more,
        ) {
            (Some(into), Some(more)) => into.extend(more),
            _ => *into = None,
        };
        if let Some(target) = schema.get("$ref").and_then(Value::as_str) {
            let found = self
                .json
                .pointer(target.trim_start_matches('#'))
                .unwrap_or_else(|| panic!("{at}: $ref {target} resolves to nothing"));
            let more = self.check(found, value, at, errors);
            merge(&mut evaluated, more);
        }
        if let Some(types) = schema.get("type") {
            let allowed: Vec<&str> = match types {
                Value::String(one) => vec![one.as_str()],
                Value::Array(many) => many.iter().filter_map(Value::as_str).collect(),
                _ => Vec::new(),
            };
            if !allowed.iter().any(|t| is_type(value, t)) {
                errors.push(format!(
                    "{at}: {} where the document says {allowed:?}",
                    kind(value)
                ));
                return evaluated;
            }
        }
        if let Some(words) = schema.get("enum").and_then(Value::as_array)
            && !words.contains(value)
        {
            errors.push(format!(
                "{at}: {value} is not one of {}",
                Value::from(words.clone())
            ));
        }
        if let Some(constant) = schema.get("const")
            && constant != value
        {
            errors.push(format!("{at}: {value} is not {constant}"));
        }
        if let (Some(pattern), Some(text)) = (
            schema.get("pattern").and_then(Value::as_str),
            value.as_str(),
        ) {
            let regex = regex::Regex::new(pattern).expect("a pattern the regex crate reads");
            if !regex.is_match(text) {
                errors.push(format!("{at}: {text:?} does not match {pattern}"));
            }
        }
        if let Some(number) = value.as_f64() {
            let bound = |key: &str| schema.get(key).and_then(Value::as_f64);
            if bound("minimum").is_some_and(|min| number < min)
                || bound("maximum").is_some_and(|max| number > max)
                || bound("exclusiveMinimum").is_some_and(|min| number <= min)
            {
                errors.push(format!("{at}: {number} is out of range in {schema}"));
            }
        }
        if let Some(items) = value.as_array() {
            if let Some(min) = schema.get("minItems").and_then(Value::as_u64)
                && (items.len() as u64) < min
            {
                errors.push(format!(
                    "{at}: {} items, at least {min} wanted",
                    items.len()
                ));
            }
            if let Some(item_schema) = schema.get("items") {
                for (i, item) in items.iter().enumerate() {
                    self.check_location(item_schema, item, &format!("{at}[{i}]"), errors);
                }
            }
        }
        if let Some(object) = value.as_object() {
            let properties = schema.get("properties").and_then(Value::as_object);
            for name in schema
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
            {
                if !object.contains_key(name) {
                    errors.push(format!("{at}: the required property {name:?} is missing"));
                }
            }
            for (key, property) in object {
                let here = format!("{at}.{key}");
                if let Some(names) = schema.get("propertyNames") {
                    self.check_location(names, &Value::String(key.clone()), &here, errors);
                }
                match (
                    properties.and_then(|p| p.get(key)),
                    schema.get("additionalProperties"),
                ) {
                    (Some(property_schema), _) => {
                        self.check_location(property_schema, property, &here, errors);
                        merge(&mut evaluated, Some(BTreeSet::from([key.clone()])));
                    }
                    (None, Some(Value::Bool(false))) => {
                        errors.push(format!("{here}: a property the schema forbids"));
                    }
                    (None, Some(Value::Bool(true))) => merge(&mut evaluated, None),
                    (None, Some(additional)) => {
                        self.check_location(additional, property, &here, errors);
                        merge(&mut evaluated, Some(BTreeSet::from([key.clone()])));
                    }
                    (None, None) => {}
                }
            }
            // An object schema that names no property is a free-form object.
            if properties.is_none()
                && schema.get("additionalProperties").is_none()
                && schema.get("type").and_then(Value::as_str) == Some("object")
            {
                merge(&mut evaluated, None);
            }
        }
        if let Some(parts) = schema.get("allOf").and_then(Value::as_array) {
            for part in parts {
                let more = self.check(part, value, at, errors);
                merge(&mut evaluated, more);
            }
        }
        for (keyword, exactly_one) in [("oneOf", true), ("anyOf", false)] {
            let Some(branches) = schema.get(keyword).and_then(Value::as_array) else {
                continue;
            };
            let outcomes: Vec<(Vec<String>, Option<BTreeSet<String>>)> = branches
                .iter()
                .map(|branch| {
                    let mut branch_errors = Vec::new();
                    let evaluated = self.check(branch, value, at, &mut branch_errors);
                    (branch_errors, evaluated)
                })
                .collect();
            let matched: Vec<&(Vec<String>, Option<BTreeSet<String>>)> =
                outcomes.iter().filter(|(e, _)| e.is_empty()).collect();
            match matched.len() {
                0 => {
                    // The closest branch says best what is wrong.
                    let closest = outcomes
                        .iter()
                        .min_by_key(|(e, _)| e.len())
                        .map(|(e, _)| e.clone())
                        .unwrap_or_default();
                    errors.push(format!("{at}: matches none of the {keyword} branches"));
                    errors.extend(closest);
                }
                1 => merge(&mut evaluated, matched[0].1.clone()),
                n if exactly_one => {
                    errors.push(format!("{at}: matches {n} of the oneOf branches, not one"));
                }
                _ => {
                    for (_, more) in matched {
                        merge(&mut evaluated, more.clone());
                    }
                }
            }
        }
        evaluated
    }
}

fn is_type(value: &Value, name: &str) -> bool {
    match name {
        "null" => value.is_null(),
        "boolean" => value.is_boolean(),
        "string" => value.is_string(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        "number" => value.is_number(),
        "integer" => {
            value.is_i64() || value.is_u64() || value.as_f64().is_some_and(|n| n.fract() == 0.0)
        }
        _ => false,
    }
}

fn kind(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(_) => "a boolean".into(),
        Value::Number(_) => format!("the number {value}"),
        Value::String(_) => format!("the string {value}"),
        Value::Array(_) => "an array".into(),
        Value::Object(_) => "an object".into(),
    }
}

/// An HTTP answer.
pub struct Answer {
    /// Its status.
    pub status: u16,
    /// Its headers (names lowercase).
    pub headers: Vec<(String, String)>,
    /// Its body.
    pub body: Vec<u8>,
}

impl Answer {
    /// A header's value.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON.
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&self.body)))
    }

    /// The media type, without parameters.
    pub fn content_type(&self) -> &str {
        self.header("content-type")
            .unwrap_or_default()
            .split(';')
            .next()
            .unwrap_or_default()
            .trim()
    }
}

/// Sends one request over the Unix socket and reads the whole answer.
pub fn request(socket: &std::path::Path, method: &str, path: &str, body: Option<&Value>) -> Answer {
    let mut stream = UnixStream::connect(socket).expect("connect to the API socket");
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    let body = body.map(Value::to_string).unwrap_or_default();
    let content_type = if body.is_empty() {
        ""
    } else {
        "Content-Type: application/json\r\n"
    };
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: panectl\r\n{content_type}Content-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    )
    .expect("send");
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).expect("read the answer");
    parse(&raw)
}

/// Reads a stream's head and its first SSE `data:` line (the stream itself never ends).
pub fn first_event(socket: &std::path::Path, path: &str) -> (Answer, Value) {
    let mut stream = UnixStream::connect(socket).expect("connect to the API socket");
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    write!(stream, "GET {path} HTTP/1.1\r\nHost: panectl\r\n\r\n").expect("send");
    let mut raw = Vec::new();
    let mut buffer = [0u8; 4096];
    loop {
        let read = stream.read(&mut buffer).expect("read the stream");
        assert!(
            read > 0,
            "the stream ended: {}",
            String::from_utf8_lossy(&raw)
        );
        raw.extend_from_slice(&buffer[..read]);
        let text = String::from_utf8_lossy(&raw);
        if let Some(start) = text.find("\ndata:")
            && let Some(end) = text[start + 1..].find('\n')
        {
            let line = &text[start + 1..start + 1 + end];
            let data = line.trim_start_matches("data:").trim();
            let value = serde_json::from_str(data).expect("the data line is JSON");
            return (parse(&raw), value);
        }
    }
}

fn parse(raw: &[u8]) -> Answer {
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("an HTTP answer");
    let head = String::from_utf8_lossy(&raw[..split]);
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|line| line.split_whitespace().nth(1))
        .and_then(|code| code.parse().ok())
        .expect("an HTTP status");
    let headers = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_string()))
        .collect();
    Answer {
        status,
        headers,
        body: raw[split + 4..].to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn document() -> Document {
        Document::new(serde_json::from_str(panectl::api::openapi::document()).expect("JSON"))
    }

    fn pane() -> Value {
        json!({"pane": "%3", "session_id": "$1", "session": "main", "window_id": "@4",
            "window_index": 0, "window": "w", "index": 0, "title": "t", "command": "bash",
            "pid": 42, "width": 80, "height": 24, "dead": false, "in_mode": false,
            "active": true, "alternate_screen": false, "sync": "live", "transport": "control",
            "output_seq": 7, "counters": {"bytes": 1, "chunks": 1, "resyncs": 0, "pauses": 0,
            "divergences": 0}, "provider": null, "provider_source": null, "status": "unknown",
            "status_rule": null, "status_detail": null, "status_source": "screen", "status_settled": true,
            "status_seconds": 1.5, "seen": false})
    }

    fn errors(document: &Document, value: &Value) -> Vec<String> {
        let schema = document.answer_schema("get", "/v1/panes/{pane}", 200, "application/json");
        document.validate(schema, value).err().unwrap_or_default()
    }

    #[test]
    fn the_validator_takes_a_right_answer_and_names_what_is_wrong_in_a_wrong_one() {
        let document = document();
        assert_eq!(errors(&document, &pane()), Vec::<String>::new());
        let wrong = |edit: &dyn Fn(&mut Value)| {
            let mut value = pane();
            edit(&mut value);
            errors(&document, &value)
        };
        let missing = wrong(&|p| {
            p.as_object_mut().unwrap().remove("status");
        });
        assert!(
            missing
                .iter()
                .any(|e| e.contains("$: the required property \"status\"")),
            "{missing:?}"
        );
        let mistyped = wrong(&|p| p["counters"]["bytes"] = json!("1"));
        assert!(
            mistyped
                .iter()
                .any(|e| e.starts_with("$.counters.bytes: the string")),
            "{mistyped:?}"
        );
        let unknown_word = wrong(&|p| p["status"] = json!("pondering"));
        assert!(
            unknown_word
                .iter()
                .any(|e| e.starts_with("$.status: \"pondering\" is not one of")),
            "{unknown_word:?}"
        );
        let bad_id = wrong(&|p| p["pane"] = json!("3"));
        assert!(
            bad_id
                .iter()
                .any(|e| e.starts_with("$.pane: \"3\" does not match")),
            "{bad_id:?}"
        );
        let not_null = wrong(&|p| p["dead"] = Value::Null);
        assert!(
            not_null.iter().any(|e| e.starts_with("$.dead: null")),
            "{not_null:?}"
        );
        let nullable_ref = wrong(&|p| p["provider_source"] = json!("guessed"));
        assert!(
            nullable_ref.iter().any(|e| e.contains("$.provider_source")),
            "{nullable_ref:?}"
        );
        let undocumented = wrong(&|p| p["mood"] = json!("fine"));
        assert!(
            undocumented
                .iter()
                .any(|e| e.starts_with("$.mood: a property")),
            "{undocumented:?}"
        );
    }

    #[test]
    fn the_validator_checks_each_item_and_each_tagged_variant() {
        let document = document();
        let list = document.answer_schema("get", "/v1/panes", 200, "application/json");
        let mut second = pane();
        second["width"] = json!(-1);
        let errors = document
            .validate(list, &json!([pane(), second]))
            .unwrap_err();
        assert!(
            errors
                .iter()
                .any(|e| e.starts_with("$[1].width: -1 is out of range")),
            "{errors:?}"
        );
        let event = document.component("Event");
        let status = json!({"id": 3, "time_ms": 1, "type": "status", "pane": "%1",
            "status": "idle", "previous": "processing", "rule": null, "provider": "codex",
            "source": "screen", "detail": null});
        assert_eq!(document.validate(event, &status), Ok(()));
        let lagged = json!({"type": "lagged", "missed": null});
        assert_eq!(document.validate(event, &lagged), Ok(()));
        // A status event without its pane, and an event of a type nobody documented.
        let mut paneless = status.clone();
        paneless.as_object_mut().unwrap().remove("pane");
        let errors = document.validate(event, &paneless).unwrap_err();
        assert!(
            errors.iter().any(|e| e.contains("\"pane\" is missing")),
            "{errors:?}"
        );
        let invented = json!({"id": 4, "time_ms": 1, "type": "weather"});
        assert!(document.validate(event, &invented).is_err());
        // An error answer is `{"error": ...}` and nothing else.
        let error = document.answer_schema("get", "/v1/panes/{pane}", 404, "application/json");
        assert_eq!(
            document.validate(error, &json!({"error": "no pane"})),
            Ok(())
        );
        assert!(
            document
                .validate(error, &json!({"message": "no pane"}))
                .is_err()
        );
    }

    #[test]
    #[should_panic(expected = "status 418 is not documented")]
    fn an_undocumented_status_fails_the_check() {
        document().check_json("get", "/v1/panes", 418, &json!({"error": "teapot"}));
    }
}
