// SPDX-License-Identifier: MIT
// HyperLogLog commands in a MONITOR capture (hyperloglog.c): PFADD and PFMERGE follow each key's sparse form
// register by register (hll::Sparse), since its length depends on which registers the elements hash to and in
// what order; each change of length becomes an Op::SetRange of kHyperLogLogKind, and so does the first register
// set after one (hllSparseSet makes room at every call, so a call at a new length can grow the buffer even
// where it changes nothing). PFCOUNT reads (monitor_importer.cpp). PFDEBUG GETREG and TODENSE make a key dense,
// but a capture never shows them: MONITOR leaves admin commands out (server.c call: CMD_ADMIN).

#include "monitor_importer.h"

namespace layoutlab::monitor {

namespace {
// The string command's check that a value is a HyperLogLog (isHLLObjectOrReply): "WRONGTYPE Key is not a
// valid HyperLogLog string value.", for a string the capture made otherwise.
constexpr std::string_view kNotHyperLogLog = "WRONGTYPE Key is not a valid HyperLogLog string value.";
} // namespace

void MonitorImporter::emitHyperLogLog(const std::string& key, std::uint32_t length) {
    Request r = base(key, Op::SetRange);
    r.valueBytes = length;
    r.kind = kHyperLogLogKind;
    emit(r);
}

monitor::KeyValue* MonitorImporter::hyperLogLogOf(const std::string& key, bool create) {
    // A key the capture has not shown is taken as absent, as a collection command takes it.
    monitor::KeyValue* found = m_keys.find(key, m_absoluteMs);
    if (found && found->isCollection()) {
        refuse(std::string(monitor::kWrongType), "the key holds " + std::string(monitor::typeName(found->content)));
        return nullptr;
    }
    if (found && found->present() && found->content != KeyValue::Content::HyperLogLog) {
        // A string SET wrote: an HLL only if its bytes are one, which the importer does not keep. The
        // server took it or refused it; either way what follows is not followed.
        if (found->content == KeyValue::Content::Integer || found->content == KeyValue::Content::Float)
            refuse(std::string(kNotHyperLogLog), "the key holds a number");
        else
            noteCommand(m_rejects.notModelled, m_name + " (of a string SET wrote)");
        return nullptr;
    }
    if (found && found->present())
        return found;
    if (!create)
        return found;
    // createHLLObject: a sparse form of every register 0, a RAW string without a TTL.
    monitor::KeyValue& made = entry(found, key);
    made = monitor::KeyValue {};
    made.content = KeyValue::Content::HyperLogLog;
    made.raw = true;
    made.hll = std::make_unique<monitor::HyperLogLogState>();
    made.length = made.hll->sparse.length();
    emitHyperLogLog(key, static_cast<std::uint32_t>(made.length));
    return &made;
}

void MonitorImporter::setRegister(
    const std::string& key, monitor::KeyValue& v, std::uint32_t index, std::uint8_t count) {
    monitor::HyperLogLogState& state = *v.hll;
    if (state.sparse.dense())
        return; // hllDenseSet: the registers change in place
    const std::uint32_t before = state.sparse.length();
    const hll::Sparse::Change change = state.sparse.set(index, count);
    const std::uint32_t after = state.sparse.length();
    v.length = after;
    if (change.promoted) {
        emitHyperLogLog(key, after);
        return;
    }
    // The replay makes room at the length it holds, then takes the new length; a call that changes nothing
    // needs it only at a length where it has not made room yet.
    if (after != before || state.roomMadeAt != before) {
        emitHyperLogLog(key, after);
        state.roomMadeAt = before;
    }
}

void MonitorImporter::pfadd() {
    // hyperloglog.c pfaddCommand: the key created sparse where absent, then each element's register set.
    const std::string& key = m_args[1];
    monitor::KeyValue* v = hyperLogLogOf(key, true);
    if (!v)
        return;
    for (std::size_t i = 2; i < m_args.size(); ++i) {
        const hll::Pattern p = hll::patternOf(m_args[i]);
        setRegister(key, *v, p.index, p.count);
    }
}

void MonitorImporter::pfmerge() {
    // hyperloglog.c pfmergeCommand: the registers' maximum over every key named, the destination too; a dense
    // one makes the destination dense (hllSparseToDense), else each register set in order (hllSparseSet).
    auto max = std::make_unique<hll::Registers>();
    max->fill(0);
    bool dense = false;
    for (std::size_t i = 1; i < m_args.size(); ++i) {
        monitor::KeyValue* source = hyperLogLogOf(m_args[i], false);
        if (!source) {
            if (const auto* held = m_keys.find(m_args[i], m_absoluteMs); held && held->present())
                return; // refused, or a string not followed: the command is left out
            continue; // an absent key is an empty HLL
        }
        if (!source->present())
            continue;
        dense = dense || source->hll->sparse.dense();
        source->hll->sparse.addRegistersTo(*max);
    }
    const std::string& key = m_args[1];
    monitor::KeyValue* destination = hyperLogLogOf(key, true);
    if (!destination)
        return;
    monitor::HyperLogLogState& state = *destination->hll;
    if (dense) {
        if (!state.sparse.dense()) {
            state.sparse.promote();
            destination->length = state.sparse.length();
            emitHyperLogLog(key, static_cast<std::uint32_t>(destination->length));
        }
        return;
    }
    for (std::uint32_t index = 0; index < hll::kRegisters; ++index)
        if ((*max)[index] != 0)
            setRegister(key, *destination, index, (*max)[index]);
}

} // namespace layoutlab::monitor
