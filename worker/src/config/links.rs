//! `[links]`: which hosts are Confluence and Jira, globally and per tenant.

use serde::Deserialize;

use super::error::{invalid, ConfigError};

/// `[links]`: which hosts are Confluence / Jira, globally and per tenant.
#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawLinks {
    #[serde(default)]
    confluence_base_urls: UrlList,
    #[serde(default)]
    jira_base_urls: UrlList,
    #[serde(default)]
    tenants: std::collections::BTreeMap<String, RawTenantLinks>,
}

/// `[links.tenants.<tenant>]`: a list given here replaces the global one.
#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTenantLinks {
    confluence_base_urls: Option<UrlList>,
    jira_base_urls: Option<UrlList>,
}

/// A list of URLs: a TOML array, or one comma-separated string (as
/// environment variables give it: `CHUNK_WORKER__LINKS__JIRA_BASE_URLS=a,b`).
#[derive(Debug, Default, Clone)]
struct UrlList(Vec<String>);

impl<'de> Deserialize<'de> for UrlList {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            One(String),
            Many(Vec<String>),
        }
        let items = match Raw::deserialize(d)? {
            Raw::One(s) => s.split(',').map(str::to_owned).collect(),
            Raw::Many(v) => v,
        };
        Ok(Self(
            items
                .into_iter()
                .map(|s| s.trim().to_owned())
                .filter(|s| !s.is_empty())
                .collect(),
        ))
    }
}

/// Which hosts are Confluence and Jira (`[links]`), with per-tenant lists
/// that replace the global ones.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LinkSettings {
    /// `links.confluence_base_urls` and `links.jira_base_urls`.
    pub global: shared::links::LinkConfig,
    /// `links.tenants.<tenant>`: `None` keeps the global list.
    pub tenants: std::collections::BTreeMap<String, TenantLinkSettings>,
}

/// Per-tenant link site lists.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TenantLinkSettings {
    /// Replaces `links.confluence_base_urls` for the tenant.
    pub confluence_base_urls: Option<Vec<String>>,
    /// Replaces `links.jira_base_urls` for the tenant.
    pub jira_base_urls: Option<Vec<String>>,
}

impl LinkSettings {
    /// The link configuration in effect for `tenant_id`.
    pub fn for_tenant(&self, tenant_id: &str) -> shared::links::LinkConfig {
        let mut config = self.global.clone();
        if let Some(t) = self.tenants.get(tenant_id) {
            if let Some(urls) = &t.confluence_base_urls {
                config.confluence_base_urls = urls.clone();
            }
            if let Some(urls) = &t.jira_base_urls {
                config.jira_base_urls = urls.clone();
            }
        }
        config
    }
}

/// Checks that every entry of a base URL list is an http(s) URL with a host.
fn check_base_urls(key: &str, urls: &[String]) -> Result<(), String> {
    for (i, u) in urls.iter().enumerate() {
        match url::Url::parse(u) {
            Ok(parsed)
                if matches!(parsed.scheme(), "http" | "https") && parsed.host_str().is_some() => {}
            Ok(_) => {
                return Err(format!(
                    "`{key}` entry {} must be an http(s) URL with a host, got {u:?}",
                    i + 1
                ))
            }
            Err(e) => return Err(format!("`{key}` entry {} is not a URL ({e}): {u:?}", i + 1)),
        }
    }
    Ok(())
}

pub(super) fn validate_links(raw: RawLinks) -> Result<LinkSettings, ConfigError> {
    check_base_urls("links.confluence_base_urls", &raw.confluence_base_urls.0)
        .map_err(|r| invalid("links.confluence_base_urls", r))?;
    check_base_urls("links.jira_base_urls", &raw.jira_base_urls.0)
        .map_err(|r| invalid("links.jira_base_urls", r))?;
    let mut tenants = std::collections::BTreeMap::new();
    for (tenant, t) in raw.tenants {
        if !shared::contract::is_tenant_id(&tenant) {
            return Err(invalid(
                "links.tenants",
                format!("`links.tenants.{tenant}`: not a tenant id (^[a-z0-9-]{{3,64}}$)"),
            ));
        }
        for (name, list) in [
            ("confluence_base_urls", &t.confluence_base_urls),
            ("jira_base_urls", &t.jira_base_urls),
        ] {
            if let Some(list) = list {
                check_base_urls(&format!("links.tenants.{tenant}.{name}"), &list.0)
                    .map_err(|r| invalid("links.tenants", r))?;
            }
        }
        tenants.insert(
            tenant,
            TenantLinkSettings {
                confluence_base_urls: t.confluence_base_urls.map(|l| l.0),
                jira_base_urls: t.jira_base_urls.map(|l| l.0),
            },
        );
    }
    Ok(LinkSettings {
        global: shared::links::LinkConfig {
            confluence_base_urls: raw.confluence_base_urls.0,
            jira_base_urls: raw.jira_base_urls.0,
        },
        tenants,
    })
}
