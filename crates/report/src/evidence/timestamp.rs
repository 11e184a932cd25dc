//! RFC 3161 time-stamps: the request CopyHound sends a time-stamping
//! authority (TSA), and the offline check of the token it answers.
//!
//! Why here and not a library call: the check must run offline, without the
//! `openssl` binary, on any machine a bundle is handed to. The structures are
//! parsed with RustCrypto's DER crates and the signatures checked with `ring`.
//!
//! What the check proves: the token's `TSTInfo` names the SHA-256 of the
//! manifest; the TSA's certificate signed it (through the signed attributes);
//! that certificate is for time-stamping only (extendedKeyUsage critical,
//! timeStamping) and was valid at the token's time; and every certificate up
//! to a self-signed root is signed by the next. The root itself is trusted by
//! its fingerprint: [`VerifiedTimestamp::root_sha256`] is what a reader
//! compares with the TSA's published one (or pins with `--trust`).
//!
//! Every byte counts: the response and the certificates must be canonical DER
//! (re-encoding gives the same bytes), each certificate carried must be part
//! of the verified chain, and the parts a signature does not cover (digest
//! algorithm list, status text, unsigned attributes, CRLs) must be what the
//! signed parts say or absent.

use cms::cert::CertificateChoices;
use cms::content_info::{CmsVersion, ContentInfo};
use cms::signed_data::{SignedData, SignerIdentifier, SignerInfo};
use der::asn1::{Int, ObjectIdentifier, OctetString};
use der::{Any, Decode, Encode};
use ring::signature::{self, UnparsedPublicKey, VerificationAlgorithm};
use sha2::{Digest, Sha256, Sha384, Sha512};
use x509_cert::Certificate;
use x509_cert::spki::AlgorithmIdentifierOwned;
use x509_tsp::{MessageImprint, TimeStampReq, TimeStampResp, TspVersion, TstInfo};

use copyhound_core::model::Timestamp;

const ID_SIGNED_DATA: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.7.2");
const ID_CT_TST_INFO: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.9.16.1.4");
const ID_CONTENT_TYPE: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.9.3");
const ID_MESSAGE_DIGEST: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.9.4");
const ID_SHA256: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.16.840.1.101.3.4.2.1");
const ID_SHA384: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.16.840.1.101.3.4.2.2");
const ID_SHA512: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.16.840.1.101.3.4.2.3");
const RSA_ENCRYPTION: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.1");
const SHA256_WITH_RSA: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.11");
const SHA384_WITH_RSA: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.12");
const SHA512_WITH_RSA: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.13");
const ECDSA_WITH_SHA256: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10045.4.3.2");
const ECDSA_WITH_SHA384: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10045.4.3.3");
const CURVE_P256: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10045.3.1.7");
const CURVE_P384: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.132.0.34");
const ID_CE_EXT_KEY_USAGE: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.5.29.37");
const ID_KP_TIME_STAMPING: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.6.1.5.5.7.3.8");

/// Why a token or a response did not verify (the message names the part).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct TimestampError(pub String);

type Checked<T> = std::result::Result<T, TimestampError>;

fn fail<T>(message: impl Into<String>) -> Checked<T> {
    Err(TimestampError(message.into()))
}

/// What a verified token says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifiedTimestamp {
    /// The TSA's time (`genTime`).
    pub time: Timestamp,
    /// The token's serial number, hex.
    pub serial: String,
    /// The TSA policy the token was issued under.
    pub policy: String,
    /// The signing certificate's subject.
    pub tsa_subject: String,
    /// SHA-256 of the chain's self-signed root (DER), hex: the anchor a
    /// reader compares with the TSA's published fingerprint.
    pub root_sha256: String,
    /// The verified chain (DER), the TSA's certificate first, the root last.
    pub chain: Vec<Vec<u8>>,
}

/// Returns the DER `TimeStampReq` for a SHA-256 `digest`: version 1, the
/// imprint, `nonce`, and `certReq` so the token carries the TSA certificate.
pub fn timestamp_request(digest: &[u8; 32], nonce: u64) -> Checked<Vec<u8>> {
    let request = TimeStampReq {
        version: TspVersion::V1,
        message_imprint: sha256_imprint(digest)?,
        req_policy: None,
        nonce: Some(int_of(nonce)?),
        cert_req: true,
        extensions: None,
    };
    request
        .to_der()
        .map_err(|error| TimestampError(format!("cannot encode the request: {error}")))
}

fn sha256_imprint(digest: &[u8; 32]) -> Checked<MessageImprint> {
    Ok(MessageImprint {
        hash_algorithm: AlgorithmIdentifierOwned {
            oid: ID_SHA256,
            parameters: Some(Any::null()),
        },
        hashed_message: OctetString::new(digest.to_vec())
            .map_err(|error| TimestampError(error.to_string()))?,
    })
}

fn int_of(value: u64) -> Checked<Int> {
    // A leading zero keeps the INTEGER positive.
    let mut bytes = vec![0u8];
    bytes.extend_from_slice(&value.to_be_bytes());
    let first = bytes
        .iter()
        .position(|byte| *byte != 0)
        .unwrap_or(bytes.len() - 1);
    let start = if bytes[first] & 0x80 != 0 {
        first - 1
    } else {
        first
    };
    Int::new(&bytes[start..]).map_err(|error| TimestampError(error.to_string()))
}

/// Checks a TSA's answer to [`timestamp_request`] as it arrives: granted,
/// the nonce echoed, and the token valid for `digest` (see [`verify_response`]).
pub fn check_fresh_response(
    response_der: &[u8],
    digest: &[u8; 32],
    nonce: u64,
    extra_certificates: &[Vec<u8>],
) -> Checked<VerifiedTimestamp> {
    let verified = verify_response(response_der, digest, extra_certificates)?;
    let tst = tst_info_of(response_der)?;
    if tst.nonce != Some(int_of(nonce)?) {
        return fail("the TSA answered another request (nonce differs)");
    }
    Ok(verified)
}

/// Verifies a `TimeStampResp` (DER) offline: status granted, the token's
/// imprint equal to `digest`, its signature by a time-stamping certificate
/// that chains, through the token's certificates and `extra_certificates`
/// (DER), to a self-signed root. See the module docs for what is checked.
pub fn verify_response(
    response_der: &[u8],
    digest: &[u8; 32],
    extra_certificates: &[Vec<u8>],
) -> Checked<VerifiedTimestamp> {
    let response = TimeStampResp::from_der(response_der)
        .map_err(|error| TimestampError(format!("the time-stamp response is not DER: {error}")))?;
    canonical(&response, response_der, "the time-stamp response")?;
    if response.status.status != cmpv2::status::PkiStatus::Accepted
        || response.status.status_string.is_some()
        || response.status.fail_info.is_some()
    {
        return fail("the time-stamp response is not a plain grant");
    }
    let Some(token) = response.time_stamp_token else {
        return fail("the time-stamp response holds no token");
    };
    verify_token(&token, digest, extra_certificates)
}

fn tst_info_of(response_der: &[u8]) -> Checked<TstInfo> {
    let response =
        TimeStampResp::from_der(response_der).map_err(|error| TimestampError(error.to_string()))?;
    let token = response
        .time_stamp_token
        .ok_or_else(|| TimestampError("no token".into()))?;
    let (_, tst, _) = signed_tst_info(&token)?;
    Ok(tst)
}

fn signed_tst_info(token: &ContentInfo) -> Checked<(SignedData, TstInfo, Vec<u8>)> {
    if token.content_type != ID_SIGNED_DATA {
        return fail("the token is not CMS SignedData");
    }
    let signed = token
        .content
        .decode_as::<SignedData>()
        .map_err(|error| TimestampError(format!("the token's SignedData: {error}")))?;
    if signed.encap_content_info.econtent_type != ID_CT_TST_INFO {
        return fail("the token's content is not a TSTInfo");
    }
    let Some(econtent) = &signed.encap_content_info.econtent else {
        return fail("the token's TSTInfo is missing");
    };
    let octets = econtent
        .decode_as::<OctetString>()
        .map_err(|error| TimestampError(format!("the token's TSTInfo: {error}")))?;
    let tst_der = octets.as_bytes().to_vec();
    let tst = TstInfo::from_der(&tst_der)
        .map_err(|error| TimestampError(format!("the token's TSTInfo: {error}")))?;
    canonical(&tst, &tst_der, "the token's TSTInfo")?;
    Ok((signed, tst, tst_der))
}

/// Verifies a `TimeStampToken` (a CMS `ContentInfo`); see [`verify_response`].
pub fn verify_token(
    token: &ContentInfo,
    digest: &[u8; 32],
    extra_certificates: &[Vec<u8>],
) -> Checked<VerifiedTimestamp> {
    let (signed, tst, tst_der) = signed_tst_info(token)?;
    if tst.message_imprint != sha256_imprint(digest)? {
        return fail("the token's message imprint is not the manifest's SHA-256");
    }
    let [signer] = signed.signer_infos.0.as_slice() else {
        return fail("the token must have exactly one signer");
    };
    // The versions RFC 5652 fixes for this content and signer identifier.
    let signer_version = match signer.sid {
        SignerIdentifier::IssuerAndSerialNumber(_) => CmsVersion::V1,
        SignerIdentifier::SubjectKeyIdentifier(_) => CmsVersion::V3,
    };
    if signed.version != CmsVersion::V3 || signer.version != signer_version {
        return fail("the token's CMS versions are not the ones its content requires");
    }
    if signed.crls.is_some() || signed.signer_infos.0.is_empty() {
        return fail("the token carries revocation lists it does not use");
    }
    if !plain_parameters(&signer.digest_alg) || !plain_parameters(&signer.signature_algorithm) {
        return fail("the token's algorithm parameters are not the plain ones");
    }
    if signed.digest_algorithms.as_slice() != [signer.digest_alg.clone()] {
        return fail("the token's digest algorithm list is not its signer's");
    }
    let mut pool: Vec<(Certificate, Vec<u8>)> = Vec::new();
    for choice in signed
        .certificates
        .as_ref()
        .map(|set| set.0.as_slice())
        .unwrap_or_default()
    {
        let CertificateChoices::Certificate(cert) = choice else {
            return fail("the token carries a certificate of another format");
        };
        let der = cert
            .to_der()
            .map_err(|error| TimestampError(error.to_string()))?;
        pool.push((cert.clone(), der));
    }
    let carried = pool.len();
    for der in extra_certificates {
        let cert = Certificate::from_der(der)
            .map_err(|error| TimestampError(format!("a chain certificate: {error}")))?;
        canonical(&cert, der, "a chain certificate")?;
        pool.push((cert, der.clone()));
    }
    let signer_index = find_signer(&pool, signer)?;
    check_signer_info(signer, &tst_der, &pool[signer_index].0)?;
    let time = generalized(&tst)?;
    let tsa_cert = &pool[signer_index].0;
    check_time_stamping_cert(tsa_cert, time)?;
    let (used, root_der) = verify_chain(&pool, signer_index)?;
    if let Some(unused) = (0..carried).find(|index| !used.contains(index)) {
        return fail(format!(
            "the token carries a certificate outside the chain ({})",
            pool[unused].0.tbs_certificate.subject
        ));
    }
    Ok(VerifiedTimestamp {
        time,
        serial: hex(tst.serial_number.as_bytes()),
        policy: tst.policy.to_string(),
        tsa_subject: tsa_cert.tbs_certificate.subject.to_string(),
        root_sha256: hex(&Sha256::digest(&root_der)),
        chain: used.iter().map(|index| pool[*index].1.clone()).collect(),
    })
}

/// Digest and signature algorithms take no parameters, or NULL.
fn plain_parameters(algorithm: &AlgorithmIdentifierOwned) -> bool {
    algorithm
        .parameters
        .as_ref()
        .is_none_or(|parameters| *parameters == Any::null())
}

fn find_signer(pool: &[(Certificate, Vec<u8>)], signer: &SignerInfo) -> Checked<usize> {
    let found = pool.iter().position(|(cert, _)| match &signer.sid {
        SignerIdentifier::IssuerAndSerialNumber(id) => {
            cert.tbs_certificate.issuer == id.issuer
                && cert.tbs_certificate.serial_number == id.serial_number
        }
        SignerIdentifier::SubjectKeyIdentifier(id) => {
            subject_key_id(cert).is_some_and(|key_id| key_id == id.0.as_bytes())
        }
    });
    found.ok_or_else(|| {
        TimestampError("the token's signing certificate is not in the bundle".into())
    })
}

fn subject_key_id(cert: &Certificate) -> Option<Vec<u8>> {
    let extension = cert
        .tbs_certificate
        .extensions
        .as_ref()?
        .iter()
        .find(|extension| extension.extn_id.to_string() == "2.5.29.14")?;
    OctetString::from_der(extension.extn_value.as_bytes())
        .ok()
        .map(|octets| octets.as_bytes().to_vec())
}

/// The signed attributes name the TSTInfo (content type, message digest),
/// and the signer's key signed them.
fn check_signer_info(signer: &SignerInfo, tst_der: &[u8], cert: &Certificate) -> Checked<()> {
    if signer.unsigned_attrs.is_some() {
        return fail("the token's signer has unsigned attributes");
    }
    let Some(attributes) = &signer.signed_attrs else {
        return fail("the token's signer has no signed attributes");
    };
    let single = |oid: ObjectIdentifier| -> Checked<Any> {
        let found: Vec<_> = attributes.iter().filter(|attr| attr.oid == oid).collect();
        match found.as_slice() {
            [attribute] if attribute.values.len() == 1 => {
                Ok(attribute.values.as_slice()[0].clone())
            }
            _ => fail(format!("the token's signed attributes need one {oid}")),
        }
    };
    let content_type = single(ID_CONTENT_TYPE)?
        .decode_as::<ObjectIdentifier>()
        .map_err(|error| TimestampError(error.to_string()))?;
    if content_type != ID_CT_TST_INFO {
        return fail("the token's signed content type is not TSTInfo");
    }
    let message_digest = single(ID_MESSAGE_DIGEST)?
        .decode_as::<OctetString>()
        .map_err(|error| TimestampError(error.to_string()))?;
    let hash = hash_with(&signer.digest_alg.oid, tst_der)?;
    if message_digest.as_bytes() != hash.as_slice() {
        return fail("the token's TSTInfo does not match its signed digest");
    }
    let signed_bytes = attributes
        .to_der()
        .map_err(|error| TimestampError(error.to_string()))?;
    let algorithm = cms_signature_algorithm(signer, cert)?;
    verify_signature(algorithm, cert, &signed_bytes, signer.signature.as_bytes()).map_err(|_| {
        TimestampError("the time-stamp signature does not verify with the TSA certificate".into())
    })
}

fn hash_with(oid: &ObjectIdentifier, bytes: &[u8]) -> Checked<Vec<u8>> {
    Ok(match *oid {
        ID_SHA256 => Sha256::digest(bytes).to_vec(),
        ID_SHA384 => Sha384::digest(bytes).to_vec(),
        ID_SHA512 => Sha512::digest(bytes).to_vec(),
        _ => return fail(format!("unsupported digest algorithm {oid}")),
    })
}

/// The `ring` algorithm of a CMS signer: the signature algorithm may name the
/// key type only (`rsaEncryption`), the digest algorithm then decides.
fn cms_signature_algorithm(
    signer: &SignerInfo,
    cert: &Certificate,
) -> Checked<&'static dyn VerificationAlgorithm> {
    let oid = signer.signature_algorithm.oid;
    let digest = signer.digest_alg.oid;
    if oid == RSA_ENCRYPTION {
        return Ok(match digest {
            ID_SHA256 => &signature::RSA_PKCS1_2048_8192_SHA256,
            ID_SHA384 => &signature::RSA_PKCS1_2048_8192_SHA384,
            ID_SHA512 => &signature::RSA_PKCS1_2048_8192_SHA512,
            _ => return fail(format!("unsupported digest algorithm {digest}")),
        });
    }
    let algorithm = x509_signature_algorithm(&signer.signature_algorithm, cert)?;
    let named_digest = match oid {
        SHA256_WITH_RSA | ECDSA_WITH_SHA256 => ID_SHA256,
        SHA384_WITH_RSA | ECDSA_WITH_SHA384 => ID_SHA384,
        _ => ID_SHA512,
    };
    if named_digest != digest {
        return fail("the token's signature and digest algorithms disagree");
    }
    Ok(algorithm)
}

/// The `ring` algorithm of a signature made by `signer_cert`'s key.
fn x509_signature_algorithm(
    algorithm: &AlgorithmIdentifierOwned,
    signer_cert: &Certificate,
) -> Checked<&'static dyn VerificationAlgorithm> {
    let curve = || {
        signer_cert
            .tbs_certificate
            .subject_public_key_info
            .algorithm
            .parameters
            .as_ref()
            .and_then(|parameters| parameters.decode_as::<ObjectIdentifier>().ok())
    };
    Ok(match (algorithm.oid, curve()) {
        (SHA256_WITH_RSA, _) => &signature::RSA_PKCS1_2048_8192_SHA256,
        (SHA384_WITH_RSA, _) => &signature::RSA_PKCS1_2048_8192_SHA384,
        (SHA512_WITH_RSA, _) => &signature::RSA_PKCS1_2048_8192_SHA512,
        (ECDSA_WITH_SHA256, Some(CURVE_P256)) => &signature::ECDSA_P256_SHA256_ASN1,
        (ECDSA_WITH_SHA256, Some(CURVE_P384)) => &signature::ECDSA_P384_SHA256_ASN1,
        (ECDSA_WITH_SHA384, Some(CURVE_P256)) => &signature::ECDSA_P256_SHA384_ASN1,
        (ECDSA_WITH_SHA384, Some(CURVE_P384)) => &signature::ECDSA_P384_SHA384_ASN1,
        (oid, _) => return fail(format!("unsupported signature algorithm {oid}")),
    })
}

fn verify_signature(
    algorithm: &'static dyn VerificationAlgorithm,
    signer_cert: &Certificate,
    message: &[u8],
    signature_bytes: &[u8],
) -> Checked<()> {
    let key = signer_cert
        .tbs_certificate
        .subject_public_key_info
        .subject_public_key
        .raw_bytes();
    UnparsedPublicKey::new(algorithm, key)
        .verify(message, signature_bytes)
        .map_err(|_| TimestampError("bad signature".into()))
}

/// The TSA certificate: for time-stamping only, valid at the token's time.
fn check_time_stamping_cert(cert: &Certificate, time: Timestamp) -> Checked<()> {
    let extension = cert
        .tbs_certificate
        .extensions
        .as_ref()
        .and_then(|extensions| {
            extensions
                .iter()
                .find(|extension| extension.extn_id == ID_CE_EXT_KEY_USAGE)
        });
    let Some(extension) = extension else {
        return fail("the TSA certificate has no extended key usage");
    };
    let usages = x509_cert::ext::pkix::ExtendedKeyUsage::from_der(extension.extn_value.as_bytes())
        .map_err(|error| TimestampError(error.to_string()))?;
    if !extension.critical || usages.0 != [ID_KP_TIME_STAMPING] {
        return fail(
            "the TSA certificate is not for time-stamping only (critical extendedKeyUsage)",
        );
    }
    let validity = &cert.tbs_certificate.validity;
    let seconds = |t: &x509_cert::time::Time| {
        i64::try_from(t.to_unix_duration().as_secs()).unwrap_or(i64::MAX)
    };
    let at = time.timestamp();
    if at < seconds(&validity.not_before) || at > seconds(&validity.not_after) {
        return fail("the TSA certificate was not valid at the time-stamp's time");
    }
    Ok(())
}

/// Walks from the signer to a self-signed root, each certificate signed by
/// the next; returns the indexes used and the root's DER.
fn verify_chain(pool: &[(Certificate, Vec<u8>)], start: usize) -> Checked<(Vec<usize>, Vec<u8>)> {
    let mut used = vec![start];
    let mut current = start;
    loop {
        let (cert, der) = &pool[current];
        if cert.signature_algorithm != cert.tbs_certificate.signature {
            return fail(format!(
                "certificate {} names two signature algorithms",
                cert.tbs_certificate.subject
            ));
        }
        let issuer = pool.iter().position(|(candidate, _)| {
            candidate.tbs_certificate.subject == cert.tbs_certificate.issuer
        });
        let Some(issuer) = issuer else {
            return fail(format!(
                "no issuer of {} in the bundle's chain",
                cert.tbs_certificate.issuer
            ));
        };
        let tbs = cert
            .tbs_certificate
            .to_der()
            .map_err(|error| TimestampError(error.to_string()))?;
        let algorithm = x509_signature_algorithm(&cert.signature_algorithm, &pool[issuer].0)?;
        let signature_bytes = cert
            .signature
            .as_bytes()
            .ok_or_else(|| TimestampError("a certificate's signature has unused bits".into()))?;
        verify_signature(algorithm, &pool[issuer].0, &tbs, signature_bytes).map_err(|_| {
            TimestampError(format!(
                "the signature on certificate {} does not verify",
                cert.tbs_certificate.subject
            ))
        })?;
        if issuer == current {
            return Ok((used, der.clone()));
        }
        if used.contains(&issuer) || used.len() > 8 {
            return fail("the certificate chain loops");
        }
        used.push(issuer);
        current = issuer;
    }
}

fn generalized(tst: &TstInfo) -> Checked<Timestamp> {
    let seconds = i64::try_from(tst.gen_time.to_unix_duration().as_secs())
        .map_err(|_| TimestampError("the time-stamp's time is out of range".into()))?;
    chrono::DateTime::from_timestamp(seconds, 0)
        .ok_or_else(|| TimestampError("the time-stamp's time is out of range".into()))
}

/// `value` encodes to exactly `original`: no byte outside what was parsed.
fn canonical<T: Encode>(value: &T, original: &[u8], what: &str) -> Checked<()> {
    let encoded = value
        .to_der()
        .map_err(|error| TimestampError(format!("{what}: {error}")))?;
    if encoded != original {
        return fail(format!("{what} is not canonical DER"));
    }
    Ok(())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// Returns the DER certificates of a PEM text, checking that it is exactly
/// the canonical PEM of those certificates (64-column base64, `\n` endings).
pub fn certificates_from_pem(pem: &str) -> Checked<Vec<Vec<u8>>> {
    let mut certificates = Vec::new();
    let mut rest = pem;
    while !rest.is_empty() {
        let Some(body) = rest.strip_prefix("-----BEGIN CERTIFICATE-----\n") else {
            return fail("the chain file is not canonical PEM");
        };
        let Some(end) = body.find("-----END CERTIFICATE-----\n") else {
            return fail("the chain file is not canonical PEM");
        };
        let base64_text: String = body[..end].lines().collect();
        let der = base64::Engine::decode(&base64::engine::general_purpose::STANDARD, base64_text)
            .map_err(|_| TimestampError("the chain file is not canonical PEM".into()))?;
        certificates.push(der);
        rest = &body[end + "-----END CERTIFICATE-----\n".len()..];
    }
    if certificates_to_pem(&certificates) != pem {
        return fail("the chain file is not canonical PEM");
    }
    Ok(certificates)
}

/// Returns certificates (DER) as PEM, 64 base64 characters a line.
pub fn certificates_to_pem(certificates: &[Vec<u8>]) -> String {
    let mut pem = String::new();
    for der in certificates {
        pem.push_str("-----BEGIN CERTIFICATE-----\n");
        let text = base64::Engine::encode(&base64::engine::general_purpose::STANDARD, der);
        for line in text.as_bytes().chunks(64) {
            pem.push_str(&String::from_utf8_lossy(line));
            pem.push('\n');
        }
        pem.push_str("-----END CERTIFICATE-----\n");
    }
    pem
}

/// The certificates a token carries (DER), to write beside it.
pub fn token_certificates(response_der: &[u8]) -> Checked<Vec<Vec<u8>>> {
    let response =
        TimeStampResp::from_der(response_der).map_err(|error| TimestampError(error.to_string()))?;
    let token = response
        .time_stamp_token
        .ok_or_else(|| TimestampError("no token".into()))?;
    let (signed, _, _) = signed_tst_info(&token)?;
    let mut out = Vec::new();
    for choice in signed.certificates.iter().flat_map(|set| set.0.iter()) {
        if let CertificateChoices::Certificate(cert) = choice {
            out.push(
                cert.to_der()
                    .map_err(|error| TimestampError(error.to_string()))?,
            );
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_der_with_the_imprint_and_nonce() {
        let digest = [7u8; 32];
        let der = timestamp_request(&digest, 0x80).expect("request");
        let request = TimeStampReq::from_der(&der).expect("decode");
        assert!(request.cert_req);
        assert_eq!(request.message_imprint.hashed_message.as_bytes(), &digest);
        assert_eq!(request.nonce.expect("nonce").as_bytes(), &[0x00, 0x80]);
        assert_eq!(int_of(1).expect("int").as_bytes(), &[1]);
    }

    #[test]
    fn pem_round_trips_and_refuses_other_layouts() {
        let certificates = vec![vec![0x30, 0x03, 0x02, 0x01, 0x01]; 2];
        let pem = certificates_to_pem(&certificates);
        assert_eq!(certificates_from_pem(&pem).expect("pem"), certificates);
        assert!(certificates_from_pem(&pem.replace('\n', "\r\n")).is_err());
        assert!(certificates_from_pem(&format!("{pem}\n")).is_err());
    }
}
