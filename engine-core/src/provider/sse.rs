//! Server-sent events, split from a byte stream that arrives in pieces of any size: a
//! line may be cut anywhere, even inside a UTF-8 character or between `\r` and `\n`.

use super::ProviderError;

/// Splits a stream of server-sent events into `(event, data)` pairs.
///
/// Lines end with `\n` or `\r\n`; `data:` lines of one event are joined with `\n`;
/// comments (`:` keep-alives) and fields other than `event` and `data` are ignored.
#[derive(Debug, Default)]
pub struct SseSplitter {
    /// The start of a line whose end has not arrived.
    partial: Vec<u8>,
    event: String,
    data: String,
    has_data: bool,
}

impl SseSplitter {
    /// Feeds `bytes`, calling `on_event(event, data)` for each event they complete; the
    /// first error of `on_event` stops the feed and is returned.
    pub fn feed(
        &mut self,
        mut bytes: &[u8],
        on_event: &mut dyn FnMut(&str, &str) -> Result<(), ProviderError>,
    ) -> Result<(), ProviderError> {
        while let Some(end) = memchr::memchr(b'\n', bytes) {
            let (line, rest) = bytes.split_at(end);
            bytes = &rest[1..];
            if self.partial.is_empty() {
                self.line(line, on_event)?;
            } else {
                let mut whole = std::mem::take(&mut self.partial);
                whole.extend_from_slice(line);
                let result = self.line(&whole, on_event);
                whole.clear();
                self.partial = whole;
                result?;
            }
        }
        self.partial.extend_from_slice(bytes);
        Ok(())
    }

    /// The stream ended: an event whose lines all arrived but whose closing blank line did
    /// not is delivered (some servers end that way); a line cut short is a truncation.
    pub fn finish(
        &mut self,
        on_event: &mut dyn FnMut(&str, &str) -> Result<(), ProviderError>,
    ) -> Result<(), ProviderError> {
        if !self.partial.is_empty() {
            return Err(ProviderError::Truncated(
                "the stream ended inside a line".into(),
            ));
        }
        self.dispatch(on_event)
    }

    fn line(
        &mut self,
        line: &[u8],
        on_event: &mut dyn FnMut(&str, &str) -> Result<(), ProviderError>,
    ) -> Result<(), ProviderError> {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() {
            return self.dispatch(on_event);
        }
        let line = std::str::from_utf8(line)
            .map_err(|_| ProviderError::Malformed("a stream line is not UTF-8".into()))?;
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            "event" => {
                self.event.clear();
                self.event.push_str(value);
            }
            _ => {} // comments (an empty field), `id`, `retry`
        }
        Ok(())
    }

    fn dispatch(
        &mut self,
        on_event: &mut dyn FnMut(&str, &str) -> Result<(), ProviderError>,
    ) -> Result<(), ProviderError> {
        let result = if self.has_data {
            on_event(&self.event, &self.data)
        } else {
            Ok(())
        };
        self.event.clear();
        self.data.clear();
        self.has_data = false;
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(pieces: &[&[u8]]) -> Result<Vec<(String, String)>, ProviderError> {
        let mut splitter = SseSplitter::default();
        let mut events = Vec::new();
        let mut on_event = |event: &str, data: &str| {
            events.push((event.to_owned(), data.to_owned()));
            Ok(())
        };
        for piece in pieces {
            splitter.feed(piece, &mut on_event)?;
        }
        splitter.finish(&mut on_event)?;
        Ok(events)
    }

    #[test]
    fn events_cut_anywhere_come_out_whole() {
        let stream = "event: a\r\ndata: {\"x\":\"é\"}\r\n\r\n: keep-alive\n\ndata: 1\ndata: 2\n\n";
        let whole = split(&[stream.as_bytes()]).unwrap();
        assert_eq!(
            whole,
            [
                ("a".into(), "{\"x\":\"é\"}".into()),
                (String::new(), "1\n2".into())
            ]
        );
        let bytes = stream.as_bytes();
        for cut in 1..bytes.len() {
            let (head, tail) = bytes.split_at(cut);
            assert_eq!(split(&[head, tail]).unwrap(), whole, "cut at {cut}");
        }
        let byte_by_byte: Vec<&[u8]> = bytes.chunks(1).collect();
        assert_eq!(split(&byte_by_byte).unwrap(), whole);
    }

    #[test]
    fn an_event_without_its_blank_line_is_delivered_at_the_end() {
        assert_eq!(
            split(&[b"data: [DONE]\n"]).unwrap(),
            [(String::new(), "[DONE]".into())]
        );
    }

    #[test]
    fn a_line_cut_short_at_the_end_is_a_truncation() {
        assert!(matches!(
            split(&[b"data: {\"choices\":[{\"del"]),
            Err(ProviderError::Truncated(_))
        ));
    }

    #[test]
    fn a_line_that_is_not_utf8_is_malformed() {
        assert!(matches!(
            split(&[b"data: \xff\n\n"]),
            Err(ProviderError::Malformed(_))
        ));
    }
}
