// SPDX-License-Identifier: MIT
#include "commands.h"
#include "interrupts.h"
#include "progress_bar.h"

#include "layoutlab/store/jobs.h"

#include <fmt/format.h>
#include <optional>

namespace layoutlab::cli {

namespace {
struct GenOptions {
    std::string output;
    std::uint64_t keys = 0;
    std::optional<std::uint64_t> ops;
    bool noLoad = false;
    std::string keySize = "16";
    std::string valueSize = "96";
    double ttlFraction = 0;
    std::uint32_t ttlSeconds = 86400;
    double intValues = 0;
    double getFraction = 0.9;
    double deleteFraction = 0;
    std::string popularity = "uniform";
    std::uint64_t seed = 1;
    std::string hashFields; // empty: string keys
    std::string fieldSize = "8";
    std::string setMembers; // empty: no sets
    std::string memberSize = "8";
    std::string zsetMembers; // empty: no sorted sets
    std::string listElements; // empty: no lists
    std::string elementSize = "8";
};

int runGen(const GenOptions& o) {
    auto config = makeGeneratorConfig(o.keys, o.ops, o.keySize, o.valueSize, o.ttlFraction, o.intValues, o.getFraction,
        o.deleteFraction, o.popularity, o.seed);
    if (!config)
        return reportError(config.error());
    config->load = !o.noLoad;
    config->ttlSeconds = o.ttlSeconds;
    struct CollectionOption {
        CollectionKind kind;
        const std::string* count;
        const std::string* size;
        const char* flag;
    };
    const CollectionOption kinds[] { { CollectionKind::Hash, &o.hashFields, &o.fieldSize, "--hash-fields" },
        { CollectionKind::Set, &o.setMembers, &o.memberSize, "--set-members" },
        { CollectionKind::SortedSet, &o.zsetMembers, &o.memberSize, "--zset-members" },
        { CollectionKind::List, &o.listElements, &o.elementSize, "--list-elements" } };
    const char* given = nullptr;
    for (const CollectionOption& c : kinds) {
        if (c.count->empty())
            continue;
        if (given)
            return reportError(
                usageError(fmt::format("a key is one type: {} and {} cannot go together", given, c.flag), c.flag));
        given = c.flag;
        if (auto ok = setCollectionElements(*config, c.kind, *c.count, *c.size); !ok)
            return reportError(ok.error());
    }
    if (!config->load && config->ops == 0)
        return reportError(usageError("--no-load without --ops would write an empty trace", "--no-load"));
    ProgressBar bar("gen");
    const auto written = runGenerateJob(*config, o.output, &bar, interruptToken());
    if (!written)
        return reportError(written.error());
    const std::string kind = config->elements ? fmt::format("{} ", collectionKindName(config->collection)) : "";
    fmt::print(stderr, "wrote {} requests over {} {}keys to {}\n", *written, config->keys, kind, o.output);
    return kExitOk;
}
} // namespace

void addGenCommand(CLI::App& app, int& status) {
    auto options = std::make_shared<GenOptions>();
    auto* cmd = app.add_subcommand("gen", "Generate a synthetic trace (layoutlab binary format)");
    cmd->add_option("-o,--output", options->output, "Trace file to write")->required();
    cmd->add_option("--keys", options->keys, "Distinct keys")->required();
    cmd->add_option("--ops", options->ops, "Operations after the load (default: the load only)");
    cmd->add_flag("--no-load", options->noLoad, "Skip the initial load that writes every key once");
    cmd->add_option("--key-size", options->keySize,
           "Key length distribution: N, uniform:A:B, normal:MU:SD, lognormal:MU:SIGMA[:MIN:MAX], hist:FILE")
        ->capture_default_str();
    cmd->add_option("--value-size", options->valueSize, "Value length distribution (same forms)")
        ->capture_default_str();
    cmd->add_option("--ttl-fraction", options->ttlFraction, "Share of writes with a TTL")->capture_default_str();
    cmd->add_option("--ttl-seconds", options->ttlSeconds, "TTL given to those writes")->capture_default_str();
    cmd->add_option("--int-values", options->intValues,
           "Share of values that are decimal integers of the drawn length (1-19 digits)")
        ->capture_default_str();
    cmd->add_option("--get-fraction", options->getFraction, "Share of GETs among the operations after the load")
        ->capture_default_str();
    cmd->add_option("--delete-fraction", options->deleteFraction, "Share of DELETEs (the rest are SETs)")
        ->capture_default_str();
    cmd->add_option("--popularity", options->popularity, "Key popularity: uniform or zipf:A")->capture_default_str();
    cmd->add_option("--seed", options->seed, "Random seed (same seed, same trace)")->capture_default_str();
    cmd->add_option("--hash-fields", options->hashFields,
        "Make every key a hash of this many fields (a length distribution's forms), loaded by one HSET; the "
        "operations become HGET, HDEL and HSET of one field");
    cmd->add_option("--field-size", options->fieldSize, "Hash field length distribution (with --hash-fields)")
        ->capture_default_str();
    cmd->add_option("--set-members", options->setMembers,
        "Make every key a set of this many members (a length distribution's forms), loaded by one SADD; the "
        "operations become SISMEMBER, SREM and SADD of one member; --int-values gives the share of sets of "
        "integers");
    cmd->add_option("--zset-members", options->zsetMembers,
        "Make every key a sorted set of this many members (a length distribution's forms), loaded by one ZADD, "
        "each with an integer score of --value-size digits; the operations become ZSCORE, ZREM and ZADD of one "
        "member");
    cmd->add_option("--member-size", options->memberSize,
           "Set or sorted set member length distribution (with --set-members or --zset-members)")
        ->capture_default_str();
    cmd->add_option("--list-elements", options->listElements,
        "Make every key a list of this many elements (a length distribution's forms), loaded by one RPUSH; the "
        "operations become LINDEX of the head, LPOP and RPUSH of one element");
    cmd->add_option("--element-size", options->elementSize, "List element length distribution (with --list-elements)")
        ->capture_default_str();
    cmd->callback([options, &status] { status = runGen(*options); });
}

} // namespace layoutlab::cli
