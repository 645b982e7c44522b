// SPDX-License-Identifier: Apache-2.0
// Effective values of a section: the defaults of an empty one, and merge() (a section inherits
// what it does not set). Directive argument parsing: config_test.cc.
#include "mc/config.h"

#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "mc/coding.h"
#include "mc/params.h"

namespace {

using mc::Coding;
using mc::Config;
using mc::ETagMode;
using mc::NoteKind;
using mc::NoTransformMode;
using mc::Toggle;

// ---- Effective values of an empty section: docs/contract.md defaults

TEST(ConfigDefaultsTest, EmptySectionGivesSpecDefaults) {
    const Config cfg;
    const std::vector<Coding> order(cfg.encodings().begin(), cfg.encodings().end());
    EXPECT_EQ(order, (std::vector<Coding>{Coding::kZstd, Coding::kBrotli, Coding::kGzip}));
    EXPECT_EQ(cfg.level_for(Coding::kGzip), 6);
    EXPECT_EQ(cfg.level_for(Coding::kDeflate), 6);
    EXPECT_EQ(cfg.level_for(Coding::kBrotli), 4);
    EXPECT_EQ(cfg.level_for(Coding::kZstd), 3);
    for (const Coding c : mc::kAllCompressing) EXPECT_EQ(cfg.window_for(c), 0);
    EXPECT_EQ(cfg.mem_level_value(), mc::kDefaultMemLevel);
    EXPECT_EQ(cfg.min_length_value(), 256);
    EXPECT_EQ(cfg.buffer_size_value(), 8192);
    EXPECT_EQ(cfg.etag_value(), ETagMode::kAddSuffix);
    EXPECT_TRUE(cfg.honor_no_transform());
    for (std::size_t k = 0; k < mc::kNoteKinds; ++k) {
        EXPECT_EQ(cfg.note(static_cast<NoteKind>(k)), nullptr);
        for (const auto owner :
             {mc::NoteOwner::kMultiCompress, mc::NoteOwner::kDeflate, mc::NoteOwner::kBrotli}) {
            EXPECT_EQ(cfg.note(owner, static_cast<NoteKind>(k)), nullptr);
        }
    }
    EXPECT_FALSE(cfg.static_on());
    EXPECT_FALSE(cfg.cache_on());
    EXPECT_EQ(cfg.cache_max_entry_value(), 1024 * 1024);
    EXPECT_EQ(cfg.min_saving_value(), 5);
    EXPECT_FALSE(cfg.transcode_on());
}

TEST(ConfigDefaultsTest, TogglesNeedOnToBeOn) {
    Config cfg;
    cfg.static_files = Toggle::kOff;
    cfg.cache = Toggle::kOff;
    EXPECT_FALSE(cfg.static_on());
    EXPECT_FALSE(cfg.cache_on());
    cfg.static_files = Toggle::kOn;
    cfg.cache = Toggle::kOn;
    EXPECT_TRUE(cfg.static_on());
    EXPECT_TRUE(cfg.cache_on());
    cfg.cache_max_entry = 0;
    EXPECT_EQ(cfg.cache_max_entry_value(), 0);
}

TEST(ConfigDefaultsTest, DeflateFollowsGzipUnlessSetItself) {
    Config cfg;
    ASSERT_TRUE(mc::set_level(cfg, "gzip", "2").is_ok());
    ASSERT_TRUE(mc::set_window(cfg, "gzip", "11").is_ok());
    EXPECT_EQ(cfg.level_for(Coding::kDeflate), 2);
    EXPECT_EQ(cfg.window_for(Coding::kDeflate), 11);
    ASSERT_TRUE(mc::set_level(cfg, "deflate", "8").is_ok());
    ASSERT_TRUE(mc::set_window(cfg, "deflate", "13").is_ok());
    EXPECT_EQ(cfg.level_for(Coding::kDeflate), 8);
    EXPECT_EQ(cfg.window_for(Coding::kDeflate), 13);
    EXPECT_EQ(cfg.level_for(Coding::kGzip), 2);
    EXPECT_EQ(cfg.window_for(Coding::kGzip), 11);
    // Other codings are not affected by gzip's settings.
    EXPECT_EQ(cfg.level_for(Coding::kBrotli), 4);
    EXPECT_EQ(cfg.window_for(Coding::kZstd), 0);
}

TEST(ConfigDefaultsTest, NoTransformModes) {
    Config cfg;
    cfg.no_transform = NoTransformMode::kHonor;
    EXPECT_TRUE(cfg.honor_no_transform());
    cfg.no_transform = NoTransformMode::kIgnore;
    EXPECT_FALSE(cfg.honor_no_transform());
}

TEST(ConfigDefaultsTest, ParamsForCarriesSettings) {
    Config cfg;
    ASSERT_TRUE(mc::set_level(cfg, "br", "7").is_ok());
    ASSERT_TRUE(mc::set_window(cfg, "br", "18").is_ok());
    cfg.brotli_lgblock = 20;
    cfg.mem_level = 5;
    const mc::EncoderParams b = cfg.params_for(Coding::kBrotli, 12345);
    EXPECT_EQ(b.coding, Coding::kBrotli);
    EXPECT_EQ(b.level, 7);
    EXPECT_EQ(b.window_log, 18);
    EXPECT_EQ(b.brotli_lgblock, 20);
    EXPECT_EQ(b.size_hint, 12345);
    EXPECT_FALSE(b.exact_size);
    const mc::EncoderParams z = Config{}.params_for(Coding::kZstd, -1);
    EXPECT_EQ(z.coding, Coding::kZstd);
    EXPECT_EQ(z.level, 3);
    EXPECT_EQ(z.window_log, 0);
    EXPECT_EQ(z.size_hint, -1);
    EXPECT_EQ(z.brotli_lgblock, 0);
    EXPECT_EQ(z.mem_level, mc::kDefaultMemLevel);
    const mc::EncoderParams g = cfg.params_for(Coding::kGzip, 0);
    EXPECT_EQ(g.level, 6);
    EXPECT_EQ(g.mem_level, 5);
    EXPECT_EQ(g.size_hint, 0);
}

// ---- merge(): every field

// Catches a new Config field that the merge tests (and merge itself) do not know about yet.
static_assert(sizeof(Config) == 256,
              "mc::Config changed: update merge() and fill_all()/expect_same()/all_fields() here");

// Every coding with per-coding settings (dcz has levels of its own).
constexpr std::array<Coding, 5> kEveryCoding = {Coding::kZstd, Coding::kBrotli, Coding::kGzip,
                                                Coding::kDeflate, Coding::kDcz};

constexpr std::size_t kMaxNotes = 8;
static_assert(mc::kNoteKinds + 2 <= kMaxNotes);
const char* const kNoteNames[2][kMaxNotes] = {{"a0", "a1", "a2", "a3", "a4", "a5", "a6", "a7"},
                                              {"b0", "b1", "b2", "b3", "b4", "b5", "b6", "b7"}};

// Sets every field of a section; `variant` 0 and 1 give two full sections that differ everywhere.
Config fill_all(int variant) {
    Config c;
    const bool a = variant == 0;
    for (const char* t : a ? std::vector<const char*>{"gzip", "br"}
                           : std::vector<const char*>{"zstd", "deflate", "gzip"}) {
        EXPECT_TRUE(mc::add_encoding(c, t).is_ok());
    }
    for (const Coding k : kEveryCoding) {
        c.level[mc::index(k)] = static_cast<std::int16_t>(a ? 1 : 2);
        c.window[mc::index(k)] = static_cast<std::int16_t>(a ? 10 : 12);
        c.cache_level[mc::index(k)] = static_cast<std::int16_t>(a ? 5 : 8);
    }
    c.mem_level = a ? 3 : 7;
    c.brotli_lgblock = a ? 16 : 20;
    c.min_length = a ? 0 : 1000;
    c.buffer_size = a ? 4096 : 65536;
    c.etag = a ? ETagMode::kNoChange : ETagMode::kRemove;
    c.no_transform = a ? NoTransformMode::kIgnore : NoTransformMode::kHonor;
    for (std::size_t k = 0; k < mc::kNoteKinds; ++k) c.notes[k] = kNoteNames[a ? 0 : 1][k];
    for (std::size_t k = 0; k < mc::kCompatNoteKinds; ++k) {
        c.deflate_notes[k] = kNoteNames[a ? 0 : 1][mc::kNoteKinds];
        c.brotli_notes[k] = kNoteNames[a ? 0 : 1][mc::kNoteKinds + 1];
    }
    c.inflate_limit = a ? 0 : 1 << 20;
    c.inflate_ratio = a ? 10 : 300;
    c.inflate_burst = a ? 1 : 5;
    c.inflate_window = a ? 65536 : 4 << 20;
    c.static_files = a ? Toggle::kOn : Toggle::kOff;
    c.cache = a ? Toggle::kOff : Toggle::kOn;
    c.cache_max_entry = a ? 0 : 4 << 20;
    c.cross_site = a ? mc::CrossSiteMode::kIdentity : mc::CrossSiteMode::kCompress;
    c.cpu_budget = static_cast<std::int16_t>(a ? 0 : 40);
    c.use_as_dictionary = a ? Toggle::kOn : Toggle::kOff;
    c.dictionary_match = a ? "/a/*" : nullptr;
    c.dictionary_dests = a ? "script" : nullptr;
    c.dictionary_id = a ? "id-a" : nullptr;
    c.dictionary_max_size = a ? 1000 : 2000;
    c.min_saving = static_cast<std::int16_t>(a ? 0 : 20);
    c.transcode = a ? Toggle::kOn : Toggle::kOff;
    return c;
}

void expect_same(const Config& got, const Config& want) {
    EXPECT_EQ(got.order_count, want.order_count);
    for (std::size_t i = 0; i < want.order_count; ++i) EXPECT_EQ(got.order[i], want.order[i]);
    EXPECT_EQ(got.level, want.level);
    EXPECT_EQ(got.window, want.window);
    EXPECT_EQ(got.mem_level, want.mem_level);
    EXPECT_EQ(got.brotli_lgblock, want.brotli_lgblock);
    EXPECT_EQ(got.min_length, want.min_length);
    EXPECT_EQ(got.buffer_size, want.buffer_size);
    EXPECT_EQ(got.etag, want.etag);
    EXPECT_EQ(got.no_transform, want.no_transform);
    EXPECT_EQ(got.notes, want.notes);
    EXPECT_EQ(got.deflate_notes, want.deflate_notes);
    EXPECT_EQ(got.brotli_notes, want.brotli_notes);
    EXPECT_EQ(got.inflate_limit, want.inflate_limit);
    EXPECT_EQ(got.inflate_ratio, want.inflate_ratio);
    EXPECT_EQ(got.inflate_burst, want.inflate_burst);
    EXPECT_EQ(got.inflate_window, want.inflate_window);
    EXPECT_EQ(got.static_files, want.static_files);
    EXPECT_EQ(got.cache, want.cache);
    EXPECT_EQ(got.cache_max_entry, want.cache_max_entry);
    EXPECT_EQ(got.cache_level, want.cache_level);
    EXPECT_EQ(got.cross_site, want.cross_site);
    EXPECT_EQ(got.cpu_budget, want.cpu_budget);
    EXPECT_EQ(got.use_as_dictionary, want.use_as_dictionary);
    EXPECT_EQ(got.dictionary_match, want.dictionary_match);
    EXPECT_EQ(got.dictionary_dests, want.dictionary_dests);
    EXPECT_EQ(got.dictionary_id, want.dictionary_id);
    EXPECT_EQ(got.dictionary_max_size, want.dictionary_max_size);
    EXPECT_EQ(got.min_saving, want.min_saving);
    EXPECT_EQ(got.transcode, want.transcode);
}

struct Field {
    std::string name;
    std::function<void(Config&, const Config&)> copy;  // copies this one field
};

std::vector<Field> all_fields() {
    std::vector<Field> f = {
        {"order",
         [](Config& c, const Config& s) {
             c.order = s.order;
             c.order_count = s.order_count;
         }},
        {"mem_level", [](Config& c, const Config& s) { c.mem_level = s.mem_level; }},
        {"brotli_lgblock", [](Config& c, const Config& s) { c.brotli_lgblock = s.brotli_lgblock; }},
        {"min_length", [](Config& c, const Config& s) { c.min_length = s.min_length; }},
        {"buffer_size", [](Config& c, const Config& s) { c.buffer_size = s.buffer_size; }},
        {"etag", [](Config& c, const Config& s) { c.etag = s.etag; }},
        {"no_transform", [](Config& c, const Config& s) { c.no_transform = s.no_transform; }},
        {"inflate_limit", [](Config& c, const Config& s) { c.inflate_limit = s.inflate_limit; }},
        {"inflate_ratio", [](Config& c, const Config& s) { c.inflate_ratio = s.inflate_ratio; }},
        {"inflate_burst", [](Config& c, const Config& s) { c.inflate_burst = s.inflate_burst; }},
        {"inflate_window", [](Config& c, const Config& s) { c.inflate_window = s.inflate_window; }},
        {"static_files", [](Config& c, const Config& s) { c.static_files = s.static_files; }},
        {"cache", [](Config& c, const Config& s) { c.cache = s.cache; }},
        {"cache_max_entry",
         [](Config& c, const Config& s) { c.cache_max_entry = s.cache_max_entry; }},
        {"cross_site", [](Config& c, const Config& s) { c.cross_site = s.cross_site; }},
        {"cpu_budget", [](Config& c, const Config& s) { c.cpu_budget = s.cpu_budget; }},
        // The offer is one setting: pattern, destinations and id go together.
        {"use_as_dictionary",
         [](Config& c, const Config& s) {
             c.use_as_dictionary = s.use_as_dictionary;
             c.dictionary_match = s.dictionary_match;
             c.dictionary_dests = s.dictionary_dests;
             c.dictionary_id = s.dictionary_id;
         }},
        {"dictionary_max_size",
         [](Config& c, const Config& s) { c.dictionary_max_size = s.dictionary_max_size; }},
        {"min_saving", [](Config& c, const Config& s) { c.min_saving = s.min_saving; }},
        {"transcode", [](Config& c, const Config& s) { c.transcode = s.transcode; }},
    };
    for (const Coding k : kEveryCoding) {
        const std::size_t i = mc::index(k);
        const std::string enc(mc::coding_token(k));
        f.push_back({"level." + enc, [i](Config& c, const Config& s) { c.level[i] = s.level[i]; }});
        f.push_back(
            {"window." + enc, [i](Config& c, const Config& s) { c.window[i] = s.window[i]; }});
        f.push_back({"cache_level." + enc,
                     [i](Config& c, const Config& s) { c.cache_level[i] = s.cache_level[i]; }});
    }
    for (std::size_t k = 0; k < mc::kNoteKinds; ++k) {
        f.push_back({"note." + std::to_string(k),
                     [k](Config& c, const Config& s) { c.notes[k] = s.notes[k]; }});
    }
    for (std::size_t k = 0; k < mc::kCompatNoteKinds; ++k) {
        f.push_back({"deflate_note." + std::to_string(k),
                     [k](Config& c, const Config& s) { c.deflate_notes[k] = s.deflate_notes[k]; }});
        f.push_back({"brotli_note." + std::to_string(k),
                     [k](Config& c, const Config& s) { c.brotli_notes[k] = s.brotli_notes[k]; }});
    }
    return f;
}

TEST(MergeTest, FieldListCoversTheWholeConfig) {
    // Copying every listed field one by one rebuilds a full section: the list misses nothing
    // that expect_same() compares.
    const Config full = fill_all(1);
    Config rebuilt;
    for (const Field& field : all_fields()) field.copy(rebuilt, full);
    expect_same(rebuilt, full);
}

TEST(MergeTest, ChildInheritsEveryUnsetField) {
    const Config parent = fill_all(0);
    expect_same(mc::merge(parent, Config{}), parent);
}

TEST(MergeTest, ChildOverridesEverySetField) {
    const Config parent = fill_all(0);
    const Config child = fill_all(1);
    expect_same(mc::merge(parent, child), child);
    expect_same(mc::merge(Config{}, child), child);
}

TEST(ConfigTest, EachModulesNotesAreItsOwn) {
    // DeflateFilterNote, BrotliFilterNote and MultiCompressNote may name the same kind; each
    // keeps its own name (a gzip response fills only the mod_deflate and our names).
    Config c;
    c.notes[0] = "m_ratio";
    c.deflate_notes[0] = "gz_ratio";
    c.brotli_notes[0] = "br_ratio";
    c.notes[static_cast<std::size_t>(NoteKind::kEncoding)] = "m_enc";
    EXPECT_STREQ(c.note(NoteKind::kRatio), "m_ratio");
    EXPECT_STREQ(c.note(mc::NoteOwner::kMultiCompress, NoteKind::kRatio), "m_ratio");
    EXPECT_STREQ(c.note(mc::NoteOwner::kDeflate, NoteKind::kRatio), "gz_ratio");
    EXPECT_STREQ(c.note(mc::NoteOwner::kBrotli, NoteKind::kRatio), "br_ratio");
    // The old modules have no encoding or source note.
    EXPECT_EQ(c.note(mc::NoteOwner::kDeflate, NoteKind::kEncoding), nullptr);
    EXPECT_EQ(c.note(mc::NoteOwner::kBrotli, NoteKind::kSource), nullptr);
    const Config merged = mc::merge(c, Config{});
    EXPECT_STREQ(merged.note(mc::NoteOwner::kDeflate, NoteKind::kRatio), "gz_ratio");
    EXPECT_STREQ(merged.note(mc::NoteOwner::kBrotli, NoteKind::kRatio), "br_ratio");
}

TEST(MergeTest, BothUnsetStaysUnset) {
    const Config merged = mc::merge(Config{}, Config{});
    expect_same(merged, Config{});
    // ...so the defaults still apply after any number of merges.
    EXPECT_EQ(merged.encodings().size(), 3u);
    EXPECT_EQ(merged.min_length_value(), 256);
    EXPECT_EQ(merged.etag_value(), ETagMode::kAddSuffix);
}

// One field set in the child at a time: only that field changes.
TEST(MergeTest, EachFieldIndependently) {
    const Config parent = fill_all(0);
    const Config full_child = fill_all(1);
    for (const Field& field : all_fields()) {
        SCOPED_TRACE(field.name);
        Config child;                   // everything unset...
        field.copy(child, full_child);  // ...but this one field
        Config want = parent;
        field.copy(want, full_child);
        expect_same(mc::merge(parent, child), want);
        // And the other way round: the child leaves only this field unset.
        Config nearly_full = full_child;
        field.copy(nearly_full, Config{});
        Config want_inherit = full_child;
        field.copy(want_inherit, parent);
        expect_same(mc::merge(parent, nearly_full), want_inherit);
    }
}

TEST(MergeTest, ZeroIsASettingNotUnset) {
    // MinLength 0, InflateLimit 0 (unlimited) and br level 0 are real values a child may set.
    Config parent;
    parent.min_length = 500;
    parent.inflate_limit = 1000;
    parent.level[mc::index(Coding::kBrotli)] = 9;
    Config child;
    child.min_length = 0;
    child.inflate_limit = 0;
    ASSERT_TRUE(mc::set_level(child, "br", "0").is_ok());
    const Config m = mc::merge(parent, child);
    EXPECT_EQ(m.min_length_value(), 0);
    EXPECT_EQ(m.inflate_limit, 0);
    EXPECT_EQ(m.level_for(Coding::kBrotli), 0);
}

TEST(MergeTest, OrderIsReplacedWholeNotMerged) {
    Config server;
    ASSERT_TRUE(mc::add_encoding(server, "br").is_ok());
    ASSERT_TRUE(mc::add_encoding(server, "gzip").is_ok());
    ASSERT_TRUE(mc::add_encoding(server, "zstd").is_ok());
    Config dir;
    ASSERT_TRUE(mc::add_encoding(dir, "gzip").is_ok());
    const Config m = mc::merge(server, dir);
    ASSERT_EQ(m.encodings().size(), 1u);
    EXPECT_EQ(m.encodings()[0], Coding::kGzip);
}

TEST(MergeTest, ThreeLevelsServerDirectoryHtaccess) {
    Config server;
    ASSERT_TRUE(mc::set_level(server, "gzip", "9").is_ok());
    server.min_length = 1000;
    server.etag = ETagMode::kRemove;
    Config dir;
    ASSERT_TRUE(mc::set_level(dir, "gzip", "4").is_ok());
    ASSERT_TRUE(mc::set_level(dir, "zstd", "12").is_ok());
    Config htaccess;
    htaccess.etag = ETagMode::kNoChange;
    ASSERT_TRUE(mc::add_encoding(htaccess, "gzip").is_ok());

    const Config m = mc::merge(mc::merge(server, dir), htaccess);
    EXPECT_EQ(m.level_for(Coding::kGzip), 4);
    EXPECT_EQ(m.level_for(Coding::kZstd), 12);
    EXPECT_EQ(m.level_for(Coding::kBrotli), 4);  // default, set nowhere
    EXPECT_EQ(m.min_length_value(), 1000);
    EXPECT_EQ(m.etag_value(), ETagMode::kNoChange);
    ASSERT_EQ(m.encodings().size(), 1u);
    EXPECT_EQ(m.buffer_size_value(), 8192);
}

}  // namespace
