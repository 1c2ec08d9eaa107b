//! Byte offset → line/column conversion for parsers that report byte ranges.

use super::Pos;

/// Bytes between character-count checkpoints.
const STRIDE: usize = 256;

/// An index of line starts in a text, answering "which line and column is byte N" in time
/// independent of the line's length (a one-line JSON document of a megabyte has as many
/// values as a long file: columns must not be counted from the line start each time).
#[derive(Debug)]
pub struct LineIndex<'a> {
    text: &'a str,
    starts: Vec<usize>,
    /// `(byte offset, characters before it)` at character boundaries about every
    /// [`STRIDE`] bytes.
    checkpoints: Vec<(usize, usize)>,
}

impl<'a> LineIndex<'a> {
    /// Indexes `text`.
    pub fn new(text: &'a str) -> Self {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        let mut checkpoints = Vec::with_capacity(text.len() / STRIDE + 1);
        let mut next = 0;
        for (chars, (byte, _)) in text.char_indices().enumerate() {
            if byte >= next {
                checkpoints.push((byte, chars));
                next = byte + STRIDE;
            }
        }
        LineIndex {
            text,
            starts,
            checkpoints,
        }
    }

    /// Characters before byte `offset` (a character boundary).
    fn chars_before(&self, offset: usize) -> usize {
        let at = match self.checkpoints.binary_search_by_key(&offset, |(b, _)| *b) {
            Ok(i) => i,
            Err(0) => return self.text[..offset].chars().count(),
            Err(i) => i - 1,
        };
        let (byte, chars) = self.checkpoints[at];
        chars + self.text[byte..offset].chars().count()
    }

    /// The 1-based position of byte `offset` (clamped to the text; columns in characters).
    pub fn pos(&self, offset: usize) -> Pos {
        let offset = offset.min(self.text.len());
        let line = match self.starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i - 1,
        };
        let start = self.starts[line];
        let mut end = offset;
        while !self.text.is_char_boundary(end) {
            end -= 1;
        }
        let column = self.chars_before(end) - self.chars_before(start) + 1;
        Pos::new(
            u32::try_from(line + 1).unwrap_or(u32::MAX),
            u32::try_from(column).unwrap_or(u32::MAX),
        )
    }
}

/// An index of line starts in characters, for parsers that report character offsets (the
/// YAML scanner counts characters, and counts a lone `\r` as a line break where every other
/// position here counts only `\n`: its offsets, not its line numbers, are the truth).
#[derive(Debug)]
pub struct CharLines {
    /// Character offset of the first character of each `\n`-separated line.
    starts: Vec<usize>,
    /// Characters in the text.
    len: usize,
}

impl CharLines {
    /// Indexes `text`.
    pub fn new(text: &str) -> Self {
        let mut starts = vec![0];
        let mut len = 0;
        for (i, c) in text.chars().enumerate() {
            if c == '\n' {
                starts.push(i + 1);
            }
            len = i + 1;
        }
        CharLines { starts, len }
    }

    /// The 1-based position of character `offset` (clamped to the text).
    pub fn pos(&self, offset: usize) -> Pos {
        let offset = offset.min(self.len);
        let line = match self.starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i - 1,
        };
        Pos::new(
            u32::try_from(line + 1).unwrap_or(u32::MAX),
            u32::try_from(offset - self.starts[line] + 1).unwrap_or(u32::MAX),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_count_characters() {
        let idx = LineIndex::new("ab\nçd\n");
        assert_eq!(idx.pos(0), Pos::new(1, 1));
        assert_eq!(idx.pos(3), Pos::new(2, 1));
        assert_eq!(idx.pos(5), Pos::new(2, 2));
        assert_eq!(idx.pos(100), Pos::new(3, 1));
    }

    #[test]
    fn long_lines_agree_with_counting() {
        let line: String = (0..3000)
            .map(|i| if i % 7 == 0 { 'é' } else { 'x' })
            .collect();
        let text = format!("{line}\n{line}");
        let idx = LineIndex::new(&text);
        for (offset, _) in text.char_indices().step_by(13) {
            let start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
            let expected = text[start..offset].chars().count() + 1;
            assert_eq!(idx.pos(offset).column as usize, expected, "{offset}");
        }
    }

    #[test]
    fn character_offsets_count_only_newlines_as_breaks() {
        let idx = CharLines::new("aé\r b\nc");
        assert_eq!(idx.pos(0), Pos::new(1, 1));
        assert_eq!(idx.pos(4), Pos::new(1, 5));
        assert_eq!(idx.pos(6), Pos::new(2, 1));
        assert_eq!(idx.pos(7), Pos::new(2, 2));
        assert_eq!(idx.pos(99), Pos::new(2, 2));
        assert_eq!(CharLines::new("").pos(3), Pos::new(1, 1));
    }
}
