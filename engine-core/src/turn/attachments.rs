//! Files sent with a message (seed 003's `Attachment`): checked against `[attachments]`
//! before anything is kept, kept as artifacts of the conversation once the turn holds it,
//! and named to the model, each with its handle, in the message it reads.

use std::fmt;

use plugin_sdk::artifacts::{Artifact, ArtifactHandle};
use plugin_sdk::engine::ArtifactStore;

use crate::config::{is_media_range, AttachmentLimits};

pub use plugin_sdk::channel::Attachment;

/// The longest file name, in bytes (as the artifact store's default).
const MAX_FILENAME_BYTES: usize = 255;

/// Why the files of a message were refused: nothing of them, nor the message, was kept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AttachmentError {
    /// Files came without a message (a resumed turn answers one already stored).
    WithoutMessage,
    /// The turn is in no conversation, which is where the files are kept.
    WithoutConversation,
    /// More files than one message may bring.
    TooMany {
        /// How many came.
        count: usize,
        /// The most accepted.
        limit: usize,
    },
    /// A file's name is empty, too long, a path, or holds control characters.
    BadName {
        /// The name, as it came (quoted with its escapes where it is shown).
        filename: String,
    },
    /// A file is empty.
    Empty {
        /// Its name.
        filename: String,
    },
    /// A file is larger than accepted.
    TooLarge {
        /// Its name.
        filename: String,
        /// Its size, in bytes.
        size: usize,
        /// The largest accepted.
        limit: usize,
    },
    /// A file's media type is not one the engine accepts (or not a media type).
    NotAccepted {
        /// Its name.
        filename: String,
        /// The type it came with.
        media_type: String,
    },
    /// A file's bytes are not what its media type says.
    Mistyped {
        /// Its name.
        filename: String,
        /// The type it came with.
        media_type: String,
        /// What its bytes are, when they are a type the engine recognizes.
        found: Option<&'static str>,
    },
}

impl AttachmentError {
    /// The HTTP status a request with these files is answered: 413 for too much, 415 for
    /// a type refused or belied by the bytes, 400 for the rest.
    pub fn status(&self) -> u16 {
        match self {
            Self::TooMany { .. } | Self::TooLarge { .. } => 413,
            Self::NotAccepted { .. } | Self::Mistyped { .. } => 415,
            Self::WithoutMessage
            | Self::WithoutConversation
            | Self::BadName { .. }
            | Self::Empty { .. } => 400,
        }
    }
}

impl fmt::Display for AttachmentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::WithoutMessage => f.write_str("attachments come with a `message`"),
            Self::WithoutConversation => {
                f.write_str("attachments are kept in a conversation: the turn has none")
            }
            Self::TooMany { count, limit } => write!(
                f,
                "{count} attachments, and a message brings at most {limit} (`[attachments] max_count`)"
            ),
            Self::BadName { filename } => write!(
                f,
                "the attachment name {filename:?} is not a file name: give 1 to {MAX_FILENAME_BYTES} bytes, no `/` or `\\`, no control characters, not `.` or `..`"
            ),
            Self::Empty { filename } => write!(f, "the attachment `{filename}` is empty"),
            Self::TooLarge {
                filename,
                size,
                limit,
            } => write!(
                f,
                "the attachment `{filename}` is {size} bytes, and one is at most {limit} (`[attachments] max_bytes`)"
            ),
            Self::NotAccepted {
                filename,
                media_type,
            } => write!(
                f,
                "the attachment `{filename}` is of type `{media_type}`, which the engine does not accept (`[attachments] media_types`)"
            ),
            Self::Mistyped {
                filename,
                media_type,
                found,
            } => match found {
                Some(found) => write!(
                    f,
                    "the attachment `{filename}` says `{media_type}`, and its bytes are `{found}`"
                ),
                None => write!(
                    f,
                    "the attachment `{filename}` says `{media_type}`, and its bytes are not that"
                ),
            },
        }
    }
}

impl std::error::Error for AttachmentError {}

/// Checks `attachments` against `limits`, in the order they came: the first refusal.
pub fn check(attachments: &[Attachment], limits: &AttachmentLimits) -> Result<(), AttachmentError> {
    if attachments.len() > limits.max_count {
        return Err(AttachmentError::TooMany {
            count: attachments.len(),
            limit: limits.max_count,
        });
    }
    attachments
        .iter()
        .try_for_each(|attachment| check_one(attachment, limits))
}

fn check_one(attachment: &Attachment, limits: &AttachmentLimits) -> Result<(), AttachmentError> {
    let Attachment {
        filename,
        media_type,
        bytes,
    } = attachment;
    // Named to the model on a line of its own: a name that could break the line or
    // pass for a path is refused, not cleaned.
    let bad_name = filename.is_empty()
        || filename.len() > MAX_FILENAME_BYTES
        || filename == "."
        || filename == ".."
        || filename.contains(['/', '\\'])
        || filename.chars().any(breaks_a_line);
    if bad_name {
        return Err(AttachmentError::BadName {
            filename: filename.clone(),
        });
    }
    let accepted = is_media_range(media_type)
        && !media_type.ends_with("/*")
        && limits
            .media_types
            .iter()
            .any(|range| match range.strip_suffix("/*") {
                Some(kind) => media_type.split_once('/').is_some_and(|(of, _)| of == kind),
                None => range == media_type,
            });
    if !accepted {
        return Err(AttachmentError::NotAccepted {
            filename: filename.clone(),
            media_type: media_type.clone(),
        });
    }
    if bytes.is_empty() {
        return Err(AttachmentError::Empty {
            filename: filename.clone(),
        });
    }
    if bytes.len() > limits.max_bytes {
        return Err(AttachmentError::TooLarge {
            filename: filename.clone(),
            size: bytes.len(),
            limit: limits.max_bytes,
        });
    }
    agrees(bytes, media_type).map_err(|found| AttachmentError::Mistyped {
        filename: filename.clone(),
        media_type: media_type.clone(),
        found,
    })
}

/// Whether `c` breaks or reorders the line a name is shown on: a control character, a
/// line or paragraph separator, or a bidirectional control (which shows `exe.pdf` for
/// `fdp.exe`).
fn breaks_a_line(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{2028}' | '\u{2029}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
        )
}

/// Whether `bytes` are what `media_type` says, as far as their content tells: text is
/// UTF-8 without NUL, a type whose signature `infer` knows has it, and no other type's
/// signature is there. `Err` names what they are instead, when that is known.
fn agrees(bytes: &[u8], media_type: &str) -> Result<(), Option<&'static str>> {
    let found = infer::get(bytes).map(|kind| kind.mime_type());
    let text = media_type.starts_with("text/") || media_type == "application/json";
    if text {
        let is_text = std::str::from_utf8(bytes).is_ok() && !bytes.contains(&0);
        return if is_text { Ok(()) } else { Err(found) };
    }
    match found {
        Some(found) if found == media_type => Ok(()),
        Some(found) => Err(Some(found)),
        None if infer::is_mime_supported(media_type) => Err(None),
        None => Ok(()),
    }
}

/// Keeps `attachments` as artifacts of `conversation`, all or none: a store that
/// refuses one gets back those it took. Answers their handles, in order, or why not.
pub(crate) async fn keep(
    store: &dyn ArtifactStore,
    conversation: &str,
    attachments: &[Attachment],
) -> Result<Vec<ArtifactHandle>, String> {
    let mut handles = Vec::with_capacity(attachments.len());
    for attachment in attachments {
        let artifact = Artifact {
            bytes: attachment.bytes.clone(),
            filename: attachment.filename.clone(),
            mime: attachment.media_type.clone(),
        };
        match store.put(conversation, artifact, None).await {
            Ok(handle) => handles.push(handle),
            Err(error) => {
                for handle in &handles {
                    let _ = store.take(conversation, handle).await;
                }
                return Err(format!(
                    "the attachment `{}` could not be kept: {error}",
                    attachment.filename
                ));
            }
        }
    }
    Ok(handles)
}

/// The message the model reads: `message`, then a line for each attachment with its
/// handle, which a tool that takes an artifact takes it by.
pub(crate) fn told(
    message: &str,
    attachments: &[Attachment],
    handles: &[ArtifactHandle],
) -> String {
    let mut text = format!(
        "{message}\n\n[Attached to this message: artifacts of this conversation, each taken once by a tool given its handle.]"
    );
    for (attachment, handle) in attachments.iter().zip(handles) {
        text.push_str(&format!(
            "\n- {} ({}, {} bytes): artifact handle {}",
            attachment.filename,
            attachment.media_type,
            attachment.bytes.len(),
            handle.as_str()
        ));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";

    fn file(filename: &str, media_type: &str, bytes: &[u8]) -> Attachment {
        Attachment {
            filename: filename.to_owned(),
            media_type: media_type.to_owned(),
            bytes: bytes.to_vec(),
        }
    }

    fn checked(attachment: Attachment) -> Result<(), AttachmentError> {
        check(&[attachment], &AttachmentLimits::default())
    }

    #[test]
    fn a_file_is_taken_when_its_bytes_are_what_its_type_says() {
        assert_eq!(checked(file("a.png", "image/png", PNG)), Ok(()));
        assert_eq!(
            checked(file("a.txt", "text/plain", "héllo".as_bytes())),
            Ok(())
        );
        assert_eq!(
            checked(file("a.pdf", "application/pdf", b"%PDF-1.7\n")),
            Ok(())
        );
    }

    #[test]
    fn bytes_that_belie_the_type_are_refused_naming_what_they_are() {
        assert_eq!(
            checked(file("a.txt", "text/plain", PNG)),
            Err(AttachmentError::Mistyped {
                filename: "a.txt".into(),
                media_type: "text/plain".into(),
                found: Some("image/png"),
            })
        );
        assert_eq!(
            checked(file("a.png", "image/png", b"just text")),
            Err(AttachmentError::Mistyped {
                filename: "a.png".into(),
                media_type: "image/png".into(),
                found: None,
            })
        );
        assert_eq!(
            checked(file("a.jpg", "image/jpeg", PNG))
                .unwrap_err()
                .status(),
            415
        );
    }

    #[test]
    fn names_that_are_paths_or_break_lines_are_refused() {
        for name in [
            "",
            ".",
            "..",
            "../etc/passwd",
            "a\\b",
            "a\nb",
            "a\u{2028}- b.pdf",
            "invoice\u{202e}fdp.exe",
            &"x".repeat(256),
        ] {
            assert_eq!(
                checked(file(name, "text/plain", b"x"))
                    .unwrap_err()
                    .status(),
                400,
                "{name:?}"
            );
        }
    }

    #[test]
    fn types_are_accepted_exactly_or_by_their_range_in_lower_case() {
        let limits = AttachmentLimits {
            media_types: vec!["image/*".into(), "text/plain".into()],
            ..AttachmentLimits::default()
        };
        assert_eq!(check(&[file("a.png", "image/png", PNG)], &limits), Ok(()));
        for refused in [
            "text/csv",
            "image/*",
            "IMAGE/PNG",
            "image",
            "text/plain; charset=utf-8",
        ] {
            let error = check(&[file("a", refused, PNG)], &limits).unwrap_err();
            assert!(
                matches!(error, AttachmentError::NotAccepted { .. }),
                "{refused}: {error:?}"
            );
        }
        assert!(is_media_range("image/*") && is_media_range("application/vnd.ms-excel"));
        assert!(!is_media_range("*/*") && !is_media_range("image/") && !is_media_range("a/b/c"));
    }

    #[test]
    fn too_many_or_too_large_is_413_and_empty_400() {
        let limits = AttachmentLimits {
            max_bytes: 3,
            max_count: 1,
            ..AttachmentLimits::default()
        };
        let one = file("a.txt", "text/plain", b"abc");
        assert_eq!(
            check(std::slice::from_ref(&one), &limits),
            Ok(()),
            "at the limit"
        );
        assert_eq!(
            check(&[one.clone(), one.clone()], &limits),
            Err(AttachmentError::TooMany { count: 2, limit: 1 })
        );
        assert_eq!(
            check(&[file("a.txt", "text/plain", b"abcd")], &limits),
            Err(AttachmentError::TooLarge {
                filename: "a.txt".into(),
                size: 4,
                limit: 3
            })
        );
        let empty = check(&[file("a.txt", "text/plain", b"")], &limits).unwrap_err();
        assert_eq!(
            (empty.status(), empty.to_string()),
            (400, "the attachment `a.txt` is empty".into())
        );
    }
}
