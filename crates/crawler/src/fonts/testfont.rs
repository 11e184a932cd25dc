//! A minimal TrueType writer for tests: glyphs made of straight-line contours,
//! a format 12 cmap, and the tables a parser needs (head, hhea, maxp, hmtx,
//! loca, glyf).

/// One glyph: contours of on-curve points, and its advance.
#[derive(Clone, Debug)]
pub(crate) struct TestGlyph {
    pub contours: Vec<Vec<(i16, i16)>>,
    pub advance: u16,
}

impl TestGlyph {
    /// A glyph drawn as a few boxes whose places depend on `seed`.
    pub fn boxes(seed: u32, advance: u16) -> TestGlyph {
        let contours = (0..3)
            .map(|part| {
                let x = ((seed * 37 + part * 101) % 700) as i16;
                let y = ((seed * 53 + part * 211) % 700) as i16;
                let size = 40 + ((seed + part) % 5) as i16 * 30;
                vec![(x, y), (x + size, y), (x + size, y + size), (x, y + size)]
            })
            .collect();
        TestGlyph { contours, advance }
    }

    /// A glyph drawing nothing, with `advance`.
    pub fn blank(advance: u16) -> TestGlyph {
        TestGlyph {
            contours: Vec::new(),
            advance,
        }
    }

    /// The same drawing at `factor` times the size.
    pub fn scaled(&self, factor: i16) -> TestGlyph {
        TestGlyph {
            contours: self
                .contours
                .iter()
                .map(|contour| {
                    contour
                        .iter()
                        .map(|(x, y)| (x * factor, y * factor))
                        .collect()
                })
                .collect(),
            advance: self.advance * factor as u16,
        }
    }
}

/// Returns a TrueType font: `glyphs[i]` is glyph `i + 1` (glyph 0 is
/// `.notdef`), `cmap` maps code points to glyph ids.
pub(crate) fn build_font(units_per_em: u16, glyphs: &[TestGlyph], cmap: &[(char, u16)]) -> Vec<u8> {
    let mut all = vec![TestGlyph::blank(500)];
    all.extend_from_slice(glyphs);
    let mut glyf = Vec::new();
    let mut loca = Vec::new();
    for glyph in &all {
        loca.extend_from_slice(&(glyf.len() as u32).to_be_bytes());
        glyf.extend(glyph_data(glyph));
        while glyf.len() % 4 != 0 {
            glyf.push(0);
        }
    }
    loca.extend_from_slice(&(glyf.len() as u32).to_be_bytes());
    let count = all.len() as u16;
    let mut hmtx = Vec::new();
    for glyph in &all {
        hmtx.extend_from_slice(&glyph.advance.to_be_bytes());
        hmtx.extend_from_slice(&0i16.to_be_bytes());
    }
    let mut head = vec![0u8; 54];
    head[0..4].copy_from_slice(&0x0001_0000u32.to_be_bytes());
    head[12..16].copy_from_slice(&0x5F0F_3CF5u32.to_be_bytes());
    head[18..20].copy_from_slice(&units_per_em.to_be_bytes());
    head[50..52].copy_from_slice(&1i16.to_be_bytes());
    let mut hhea = vec![0u8; 36];
    hhea[0..4].copy_from_slice(&0x0001_0000u32.to_be_bytes());
    hhea[34..36].copy_from_slice(&count.to_be_bytes());
    let mut maxp = Vec::new();
    maxp.extend_from_slice(&0x0000_5000u32.to_be_bytes());
    maxp.extend_from_slice(&count.to_be_bytes());
    let tables = [
        (*b"cmap", cmap_table(cmap)),
        (*b"glyf", glyf),
        (*b"head", head),
        (*b"hhea", hhea),
        (*b"hmtx", hmtx),
        (*b"loca", loca),
        (*b"maxp", maxp),
    ];
    sfnt(&tables)
}

fn glyph_data(glyph: &TestGlyph) -> Vec<u8> {
    if glyph.contours.is_empty() {
        return Vec::new();
    }
    let points: Vec<(i16, i16)> = glyph.contours.iter().flatten().copied().collect();
    let mut data = Vec::new();
    data.extend_from_slice(&(glyph.contours.len() as i16).to_be_bytes());
    let min_x = points.iter().map(|p| p.0).min().unwrap_or(0);
    let min_y = points.iter().map(|p| p.1).min().unwrap_or(0);
    let max_x = points.iter().map(|p| p.0).max().unwrap_or(0);
    let max_y = points.iter().map(|p| p.1).max().unwrap_or(0);
    for value in [min_x, min_y, max_x, max_y] {
        data.extend_from_slice(&value.to_be_bytes());
    }
    let mut end = 0u16;
    for contour in &glyph.contours {
        end += contour.len() as u16;
        data.extend_from_slice(&(end - 1).to_be_bytes());
    }
    data.extend_from_slice(&0u16.to_be_bytes());
    data.extend(std::iter::repeat_n(0x01u8, points.len()));
    let (mut last_x, mut last_y) = (0i16, 0i16);
    let mut ys = Vec::new();
    for (x, y) in &points {
        data.extend_from_slice(&(x - last_x).to_be_bytes());
        ys.extend_from_slice(&(y - last_y).to_be_bytes());
        (last_x, last_y) = (*x, *y);
    }
    data.extend(ys);
    data
}

fn cmap_table(cmap: &[(char, u16)]) -> Vec<u8> {
    let mut groups: Vec<(u32, u16)> = cmap.iter().map(|(c, g)| (u32::from(*c), *g)).collect();
    groups.sort_unstable();
    let mut table = Vec::new();
    table.extend_from_slice(&0u16.to_be_bytes());
    table.extend_from_slice(&1u16.to_be_bytes());
    table.extend_from_slice(&3u16.to_be_bytes());
    table.extend_from_slice(&10u16.to_be_bytes());
    table.extend_from_slice(&12u32.to_be_bytes());
    table.extend_from_slice(&12u16.to_be_bytes());
    table.extend_from_slice(&0u16.to_be_bytes());
    table.extend_from_slice(&(16 + 12 * groups.len() as u32).to_be_bytes());
    table.extend_from_slice(&0u32.to_be_bytes());
    table.extend_from_slice(&(groups.len() as u32).to_be_bytes());
    for (code_point, glyph) in groups {
        table.extend_from_slice(&code_point.to_be_bytes());
        table.extend_from_slice(&code_point.to_be_bytes());
        table.extend_from_slice(&u32::from(glyph).to_be_bytes());
    }
    table
}

fn sfnt(tables: &[([u8; 4], Vec<u8>)]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&0x0001_0000u32.to_be_bytes());
    out.extend_from_slice(&(tables.len() as u16).to_be_bytes());
    out.extend_from_slice(&[0u8; 6]);
    let mut offset = 12 + 16 * tables.len();
    let mut body = Vec::new();
    for (tag, data) in tables {
        out.extend_from_slice(tag);
        out.extend_from_slice(&0u32.to_be_bytes());
        out.extend_from_slice(&(offset as u32).to_be_bytes());
        out.extend_from_slice(&(data.len() as u32).to_be_bytes());
        body.extend_from_slice(data);
        while body.len() % 4 != 0 {
            body.push(0);
        }
        offset = 12 + 16 * tables.len() + body.len();
    }
    out.extend(body);
    out
}
