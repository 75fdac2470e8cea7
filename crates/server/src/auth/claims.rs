//! From a verified token's claims to a [`Principal`]: name, role and attributes.
//!
//! A token is mapped to a configured principal (from `principals:`, with its role and attributes) only when
//! `server.oidc.principal_claim` says which claim picks it. Without it, a token is its own principal, named by
//! its `sub`: its role comes from `role_claim` or `role`, its attributes only from `claims`. A `sub` that is
//! also a configured principal's name (or starts with `token:` or `oidc:`, the names of API tokens and of such
//! subjects) is named `oidc:SUB`, so that the token never shares that principal's conversations, approvals or
//! audit trail either.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};
use steward_app::{Config, OidcDef, PrincipalDef};
use steward_core::Principal;

use super::jwt::AuthError;

/// The claim that names a token's own principal when `principal_claim` is not set.
const SUBJECT: &str = "sub";
/// Names that are never a token's own principal as they stand.
const RESERVED_PREFIXES: [&str; 2] = ["token:", "oidc:"];

/// How verified claims become a principal.
#[derive(Debug)]
pub(super) struct ClaimMapping {
    /// The claim that picks a configured principal; `None`: none is ever picked.
    pub(super) principal_claim: Option<String>,
    pub(super) role_claim: Option<String>,
    fallback_role: Option<String>,
    /// Claim → attribute.
    claims: BTreeMap<String, String>,
    principals: BTreeMap<String, PrincipalDef>,
    /// The configured roles (when empty, any role is accepted).
    roles: BTreeSet<String>,
}

fn unauthenticated(message: String) -> AuthError {
    AuthError::Unauthenticated(message)
}

fn forbidden(message: String) -> AuthError {
    AuthError::Forbidden(message)
}

impl ClaimMapping {
    /// What `oidc` and `config` say about principals and roles.
    pub(super) fn new(oidc: &OidcDef, config: &Config) -> Self {
        Self {
            principal_claim: oidc.principal_claim.clone(),
            role_claim: oidc.role_claim.clone(),
            fallback_role: oidc.role.clone(),
            claims: oidc.claims.clone(),
            principals: config.principals.clone(),
            roles: config.roles.keys().cloned().collect(),
        }
    }

    /// The principal of verified claims.
    pub(super) fn principal(&self, claims: &Map<String, Value>) -> Result<Principal, AuthError> {
        let claim = self.principal_claim.as_deref().unwrap_or(SUBJECT);
        let value = match claims.get(claim) {
            Some(Value::String(value)) if !value.is_empty() => value.clone(),
            Some(_) => {
                return Err(unauthenticated(format!(
                    "its `{claim}` claim, which names the principal, is not a non-empty string"
                )));
            }
            None => {
                return Err(unauthenticated(format!(
                    "it has no `{claim}` claim to name the principal{}",
                    if self.principal_claim.is_none() {
                        "; set `server.oidc.principal_claim` to the claim that does (its value then also \
                         picks the configured principal of that name)"
                    } else {
                        ""
                    }
                )));
            }
        };
        // Only an explicit `principal_claim` maps a token to a configured principal.
        let known = self
            .principal_claim
            .as_ref()
            .and_then(|_| self.principals.get(&value));
        let name = match known {
            Some(_) => value.clone(),
            None => self.own_name(&value),
        };
        let from_claim = match self.role_claim.as_deref() {
            Some(role_claim) => role_from_claim(role_claim, claims.get(role_claim))?,
            None => None,
        };
        let Some(role) = from_claim
            .or_else(|| known.map(|p| p.role.clone()))
            .or_else(|| self.fallback_role.clone())
        else {
            return Err(forbidden(format!(
                "no role for `{name}`: the token {}, {}, and `server.oidc.role` is not set; configure one of \
                 them in steward.yaml",
                match &self.role_claim {
                    Some(c) => format!("has no `{c}` claim"),
                    None => "names no role (`server.oidc.role_claim` is not set)".to_owned(),
                },
                match &self.principal_claim {
                    Some(_) => format!("`{value}` is not under `principals:`"),
                    None => "it is not mapped to a configured principal (`server.oidc.principal_claim` is not \
                             set)"
                        .to_owned(),
                }
            )));
        };
        if !self.roles.is_empty() && !self.roles.contains(&role) {
            let list: Vec<&str> = self.roles.iter().map(String::as_str).collect();
            return Err(forbidden(format!(
                "the role `{role}` of `{name}` is not defined under `roles:` in steward.yaml; the roles are: {}",
                list.join(", ")
            )));
        }
        let mut principal = Principal::named(name);
        principal.role = Some(role);
        if let Some(def) = known {
            principal.attributes = def.attributes.clone();
        }
        for (claim, attribute) in &self.claims {
            if let Some(value) = claims.get(claim) {
                principal
                    .attributes
                    .insert(attribute.clone(), value.clone());
            }
        }
        Ok(principal)
    }

    /// The name of a token's own principal: `value`, unless a configured principal or an API token could go
    /// by it (then `oidc:value`).
    fn own_name(&self, value: &str) -> String {
        let taken = self.principals.contains_key(value)
            || RESERVED_PREFIXES.iter().any(|p| value.starts_with(p));
        if taken {
            format!("oidc:{value}")
        } else {
            value.to_owned()
        }
    }
}

/// The role a role claim names: a string, or a list holding one string; absent or null: none.
fn role_from_claim(claim: &str, value: Option<&Value>) -> Result<Option<String>, AuthError> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(role)) if role.is_empty() => Ok(None),
        Some(Value::String(role)) => Ok(Some(role.clone())),
        Some(Value::Array(items)) if items.is_empty() => Ok(None),
        Some(Value::Array(items)) => match items.as_slice() {
            [Value::String(role)] if !role.is_empty() => Ok(Some(role.clone())),
            _ => Err(forbidden(format!(
                "the token's `{claim}` claim lists several values or non-strings; steward needs one role name"
            ))),
        },
        Some(_) => Err(forbidden(format!(
            "the token's `{claim}` claim is not a role name (a string)"
        ))),
    }
}
