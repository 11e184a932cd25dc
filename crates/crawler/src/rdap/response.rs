//! Reading RFC 9083 answers: the registrar and abuse entities of a domain, the
//! name, range and abuse entity of an IP network. Entities nest (a registrar's
//! abuse contact sits inside the registrar; a network's abuse contact inside
//! its registrant organization), and contacts are jCards (RFC 7095):
//! `["vcard", [["fn", {}, "text", "Name"], ["email", {}, "text", "a@b"], ...]]`.

use std::net::IpAddr;

use copyhound_core::model::{HostingNetwork, Registrar};
use serde_json::Value;

use super::bootstrap::range_as_cidr;

/// Deepest entity nesting read (answers are small trees; a deeper one is hostile).
const MAX_ENTITY_DEPTH: usize = 6;

/// Returns the registrar of a domain answer, its abuse contact being the
/// abuse entity inside the registrar (the ICANN gTLD profile), else one at
/// the top level.
pub fn registrar(domain: &Value) -> Option<Registrar> {
    let entities = entities(domain);
    let registrar = entities
        .iter()
        .find(|entity| has_role(entity, "registrar"))?;
    let abuse = entities_within(registrar, 1)
        .into_iter()
        .find(|entity| has_role(entity, "abuse"))
        .or_else(|| {
            entities
                .iter()
                .copied()
                .find(|entity| has_role(entity, "abuse"))
        });
    let iana_id = registrar
        .get("publicIds")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|id| {
            id.get("type")
                .and_then(Value::as_str)
                .is_some_and(|kind| kind.to_ascii_lowercase().contains("iana"))
        })
        .and_then(|id| id.get("identifier"))
        .and_then(value_text);
    let name = card_text(registrar, "fn")
        .or_else(|| card_text(registrar, "org"))
        .or_else(|| registrar.get("handle").and_then(value_text))
        .unwrap_or_default();
    let url = card_text(registrar, "url").or_else(|| about_link(registrar));
    Some(Registrar {
        name,
        iana_id,
        abuse_email: abuse.and_then(|entity| card_text(entity, "email")),
        abuse_phone: abuse.and_then(|entity| card_text(entity, "tel")),
        url,
    })
}

/// Returns the network of an IP answer for `address`.
pub fn network(answer: &Value, address: IpAddr) -> HostingNetwork {
    let entities = entities(answer);
    let abuse = entities
        .iter()
        .copied()
        .find(|entity| has_role(entity, "abuse"));
    let organization = entities
        .iter()
        .copied()
        .find(|entity| has_role(entity, "registrant"))
        .and_then(|entity| card_text(entity, "fn").or_else(|| card_text(entity, "org")));
    HostingNetwork {
        address: address.to_string(),
        name: answer.get("name").and_then(value_text),
        handle: answer.get("handle").and_then(value_text),
        cidr: network_range(answer),
        organization,
        abuse_email: abuse.and_then(|entity| card_text(entity, "email")),
        abuse_phone: abuse.and_then(|entity| card_text(entity, "tel")),
    }
}

/// The registered name an answer is for (`ldhName`).
pub fn domain_name(domain: &Value) -> Option<String> {
    domain
        .get("ldhName")
        .or_else(|| domain.get("unicodeName"))
        .and_then(value_text)
        .map(|name| name.trim_end_matches('.').to_ascii_lowercase())
}

/// Whether the answer is an RDAP object at all (an object with an `objectClassName`).
pub fn is_rdap_object(answer: &Value, class: &str) -> bool {
    answer
        .get("objectClassName")
        .and_then(Value::as_str)
        .is_some_and(|name| name.eq_ignore_ascii_case(class))
}

fn network_range(answer: &Value) -> Option<String> {
    let cidrs: Vec<String> = answer
        .get("cidr0_cidrs")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|cidr| {
            let prefix = cidr
                .get("v4prefix")
                .or_else(|| cidr.get("v6prefix"))
                .and_then(Value::as_str)?;
            let length = cidr.get("length").and_then(Value::as_u64)?;
            Some(format!("{prefix}/{length}"))
        })
        .collect();
    if !cidrs.is_empty() {
        return Some(cidrs.join(", "));
    }
    let start = answer.get("startAddress").and_then(Value::as_str)?;
    let end = answer.get("endAddress").and_then(Value::as_str)?;
    match (start.parse::<IpAddr>(), end.parse::<IpAddr>()) {
        (Ok(start_ip), Ok(end_ip)) => {
            Some(range_as_cidr(start_ip, end_ip).unwrap_or_else(|| format!("{start} - {end}")))
        }
        _ => Some(format!("{start} - {end}")),
    }
}

/// Every entity of an answer, depth first, parents before their children.
fn entities(object: &Value) -> Vec<&Value> {
    entities_within(object, MAX_ENTITY_DEPTH)
}

fn entities_within(object: &Value, depth: usize) -> Vec<&Value> {
    let mut found = Vec::new();
    if depth == 0 {
        return found;
    }
    for entity in object
        .get("entities")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        found.push(entity);
        found.extend(entities_within(entity, depth - 1));
    }
    found
}

fn has_role(entity: &Value, role: &str) -> bool {
    entity
        .get("roles")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .any(|value| {
            value
                .as_str()
                .is_some_and(|name| name.eq_ignore_ascii_case(role))
        })
}

/// The first value of jCard property `property` as text (`tel:` and
/// `mailto:` URIs unwrapped, structured values joined), never empty.
fn card_text(entity: &Value, property: &str) -> Option<String> {
    let properties = entity.get("vcardArray")?.as_array()?.get(1)?.as_array()?;
    properties.iter().find_map(|item| {
        let item = item.as_array()?;
        let name = item.first()?.as_str()?;
        if !name.eq_ignore_ascii_case(property) {
            return None;
        }
        let text = item.get(3).and_then(value_text)?;
        let text = text
            .strip_prefix("tel:")
            .or_else(|| text.strip_prefix("mailto:"))
            .unwrap_or(&text)
            .trim()
            .to_string();
        (!text.is_empty()).then_some(text)
    })
}

/// Text of a string, a number, or an array of them (joined by spaces).
fn value_text(value: &Value) -> Option<String> {
    let text = match value {
        Value::String(text) => text.trim().to_string(),
        Value::Number(number) => number.to_string(),
        Value::Array(items) => items
            .iter()
            .filter_map(value_text)
            .collect::<Vec<_>>()
            .join(" "),
        _ => return None,
    };
    let text: String = text.chars().filter(|c| !c.is_control()).take(500).collect();
    (!text.is_empty()).then_some(text)
}

fn about_link(entity: &Value) -> Option<String> {
    entity
        .get("links")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|link| link.get("rel").and_then(Value::as_str) != Some("self"))
        .find_map(|link| link.get("href").and_then(value_text))
        .filter(|href| href.starts_with("http://") || href.starts_with("https://"))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_top_level_abuse_entity_serves_when_the_registrar_has_none() {
        let answer = json!({
            "objectClassName": "domain",
            "ldhName": "NOVELS.EXAMPLE",
            "entities": [
                {"objectClassName": "entity", "roles": ["registrar"],
                 "vcardArray": ["vcard", [["version", {}, "text", "4.0"], ["org", {}, "text", "Org Registrar"]]],
                 "links": [{"rel": "self", "href": "https://rdap.example/entity/1"},
                           {"rel": "about", "href": "https://registrar.example/"}]},
                {"objectClassName": "entity", "roles": ["technical", "abuse"],
                 "vcardArray": ["vcard", [["email", {"type": "work"}, "text", "mailto:noc@registrar.example"],
                                          ["tel", {"type": ["voice"]}, "uri", "tel:+86.1012345678"]]]}
            ]
        });
        let registrar = registrar(&answer).unwrap();
        assert_eq!(registrar.name, "Org Registrar");
        assert_eq!(registrar.url.as_deref(), Some("https://registrar.example/"));
        assert_eq!(
            registrar.abuse_email.as_deref(),
            Some("noc@registrar.example")
        );
        assert_eq!(registrar.abuse_phone.as_deref(), Some("+86.1012345678"));
        assert_eq!(domain_name(&answer).as_deref(), Some("novels.example"));
    }

    #[test]
    fn hostile_shapes_yield_nothing_rather_than_failing() {
        for answer in [
            json!(null),
            json!({"entities": "x"}),
            json!({"entities": [{"roles": "registrar"}]}),
            json!({"entities": [{"roles": ["registrar"], "vcardArray": ["vcard", "x"]}]}),
            json!({"entities": [{"roles": ["registrar"], "vcardArray": [["fn"]]}]}),
        ] {
            let found = registrar(&answer);
            assert!(
                found.is_none_or(|registrar| registrar.name.is_empty()),
                "{answer}"
            );
        }
        let network = network(
            &json!({"startAddress": "x", "endAddress": 3}),
            "192.0.2.1".parse().unwrap(),
        );
        assert_eq!(network.cidr, None);
    }
}
