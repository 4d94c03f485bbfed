//! The per-chunk file format `breadcrumbMode`: the `embed_text` of a table of cases, one per
//! rule, under `conditional`, `always` and `none` (the per-chunk file format "Breadcrumb
//! Context Options"; its worked example is the first case).

#![allow(clippy::unwrap_used)] // tests: a panic is the failure report

use shared::{DocumentMeta, Engine};

/// A `markdown_headers` profile: sections at headings 1-3, split at 100
/// tokens with `overlap` tokens of overlap; no minimum of its own, so
/// "short" is below the per-chunk file format's 64 + `overlap`.
fn profile(mode: &str, overlap: usize) -> String {
    format!(
        "name = \"crumbs-{mode}-{overlap}\"\nstrategy = \"markdown_headers\"\nbreadcrumb_mode = \"{mode}\"\n\
         [params]\nheadings = [1, 2, 3]\nchunk_size = 100\nchunk_overlap = {overlap}\n"
    )
}

fn engine() -> Engine {
    let mut b = Engine::builder();
    for mode in ["conditional", "always", "none"] {
        for overlap in [0, 30] {
            b = b.profile_source(format!("{mode}.toml"), profile(mode, overlap));
        }
    }
    b.build().unwrap()
}

fn meta(title: Option<&str>) -> DocumentMeta {
    DocumentMeta {
        tenant_id: "acme-prod".into(),
        document_id: "doc".into(),
        source_version_id: "v1".into(),
        title: title.map(str::to_owned),
        ..DocumentMeta::default()
    }
}

const OAUTH: &str = "## Authentication\n\n\
Every request carries a token. Tokens come from the identity provider and expire after an hour. \
Clients refresh them in the background, so users never see a login prompt in the middle of their work. \
Service accounts use client credentials instead of user tokens, and their secrets rotate every ninety days. \
Audit logs record which token made each call.\n\n\
### OAuth Setup\n\n\
Configure your OAuth provider:\n\n\
```javascript\nconst config = {\n  clientId: 'your-client-id',\n  redirectUri: 'https://example.com/callback'\n};\n```\n";

const P1: &str = "Access tokens are signed JSON Web Tokens. The gateway checks the signature, the issuer and the audience before a request reaches any service. A token that fails any check is refused with status 401, and the refusal is logged with the request's correlation id but never with the token itself. Clock skew of up to one minute is tolerated.";
const P2: &str = "Refresh tokens live longer than access tokens and are stored only in the secure cookie jar of the browser. They are rotated on every use: the old refresh token stops working as soon as a new one is issued, so a stolen token is useful for one refresh at most. Rotation failures sign the user out everywhere.";
const P3: &str = "Scopes limit what a token may do. Reading documents needs the read scope, changing them needs the write scope, and administration needs a separate role granted by an operator. Scopes are checked by each service, not only by the gateway, so a misrouted request cannot escape them.";
const TABLE: &str = "| Claim | Meaning |\n|---|---|\n| exp | expiry time |\n| aud | audience |\n| scp | scopes |\n| sub | user id |\n| iss | issuer |\n| nbf | not valid before |\n| jti | token id, for revocation |";
const P5: &str = "Tokens are never written to disk by the client libraries.";

/// Title from metadata, different from the first heading.
fn doc_b() -> String {
    format!("## Tokens\n\n{P1}\n\n{P2}\n\n{P3}\n\n{TABLE}\n\n{P2}\n\n{P5}\n")
}

/// The first heading is the title.
fn doc_c() -> String {
    format!("# API Documentation\n\nThis guide explains how clients authenticate.\n\n## Tokens\n\n{P1}\n\n{P1}\n")
}

/// The breadcrumb of every chunk ("" when `embed_text` is the chunk text).
fn crumbs(engine: &Engine, md: &str, title: Option<&str>, profile: &str) -> Vec<String> {
    let doc = engine
        .chunk(md.as_bytes(), &meta(title), Some(profile))
        .unwrap();
    doc.chunks
        .iter()
        .map(|c| {
            if c.embed_text == c.chunk_text {
                String::new()
            } else {
                let crumb = c.embed_text.strip_suffix(&c.chunk_text).unwrap();
                crumb.strip_suffix("\n\n").unwrap().to_owned()
            }
        })
        .collect()
}

const TITLE: &str = "API Documentation";
const FULL: &str = "API Documentation > Tokens";

#[test]
fn file_format_worked_example() {
    // The per-chunk file format "Example showing the difference": the chunk that starts the
    // OAuth Setup section gets the full breadcrumb, its own heading included.
    let e = engine();
    let doc = e
        .chunk(
            OAUTH.as_bytes(),
            &meta(Some(TITLE)),
            Some("crumbs-conditional-0"),
        )
        .unwrap();
    let c = &doc.chunks[1];
    assert_eq!(
        c.chunk_text,
        "### OAuth Setup\n\nConfigure your OAuth provider:\n\n```javascript\nconst config = {\n  clientId: 'your-client-id',\n  redirectUri: 'https://example.com/callback'\n};\n```"
    );
    assert_eq!(
        c.embed_text,
        format!(
            "API Documentation > Authentication > OAuth Setup\n\n{}",
            c.chunk_text
        )
    );
}

/// Each row: profile, document, and the breadcrumb of every chunk in order.
#[test]
fn every_rule_of_each_mode() {
    let e = engine();
    let b = doc_b();
    let c = doc_c();
    let cases: [(&str, &str, Option<&str>, [&str; 5]); 6] = [
        // Title from metadata, not the first heading. Chunks: section start
        // (70 tokens), short prose (62 < 64), short prose (58), a table
        // (56), mid-section prose (73).
        (
            "crumbs-conditional-0",
            &b,
            Some(TITLE),
            [FULL, FULL, FULL, FULL, TITLE],
        ),
        // With 30 tokens of overlap "short" is below 94: all five are.
        ("crumbs-conditional-30", &b, Some(TITLE), [FULL; 5]),
        ("crumbs-always-0", &b, Some(TITLE), [FULL; 5]),
        ("crumbs-none-0", &b, Some(TITLE), [""; 5]),
        // The title is the first heading. Chunks: the H1 and a short intro
        // (the breadcrumb would be that heading line: nothing), the section
        // start (the title is not repeated), mid-section prose (67 tokens:
        // nothing).
        ("crumbs-conditional-0", &c, None, ["", FULL, "", "-", "-"]),
        ("crumbs-always-0", &c, None, [TITLE, FULL, FULL, "-", "-"]),
    ];
    for (profile, md, title, want) in cases {
        let got = crumbs(&e, md, title, profile);
        let want: Vec<&str> = want.iter().copied().filter(|w| *w != "-").collect();
        assert_eq!(got, want, "{profile} on {:?}", &md[..20]);
    }
    // Short through the overlap: mid-section prose of 67 tokens.
    assert_eq!(crumbs(&e, &c, None, "crumbs-conditional-30")[2], FULL);
}
