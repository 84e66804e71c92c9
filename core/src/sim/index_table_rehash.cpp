// SPDX-License-Identifier: MIT
// IndexTableModel's incremental rehash (layoutlab/sim/index_table_model.h): the steps the engines take, and how
// far the engine's rehash index may stand from the model's mean when its steps skip runs of empty buckets.
#include "layoutlab/sim/index_table_model.h"

#include <algorithm>
#include <cmath>

namespace layoutlab {

namespace {
constexpr double kRedisEmptyVisits = 10; // dict.c dictRehash(d, n): empty_visits = n * 10
}

namespace {
// The variance a rehash step that skips empty buckets adds to where the engine's index stands, in buckets:
// the steps it takes to cross `advance` buckets vary with how many of them hold entries (a table holds a
// fixed number, so a bucket's occupancy varies as e^-d (1 - (1 + d) e^-d), less than on its own) and with
// how long the runs of empty buckets before them are, modulo the 10 a step skips (the remainder r of a
// geometric run: chance p q^r / (1 - q^10)). Checked against the engine's steps (index_table_model_test).
struct SkippingStep {
    double p = 0; // a bucket's chance of holding an entry
    double found = 0; // the chance the step finds a non-empty bucket within empty_visits
    double advance = 0; // buckets it passes, in expectation
    double moved = 0; // entries it moves, in expectation
};
// dict.c dictRehash(d, 1) (and Valkey 9.1 hashtable.c rehashStepShrink): moves the first non-empty bucket
// within empty_visits = 10 of the index, else stops after 10 empty ones: E[min(G, 10)] buckets for G geometric
// in a bucket's chance of holding an entry, and a non-empty bucket's entries when one is found.
SkippingStep skippingStep(double density) {
    SkippingStep s;
    s.p = -std::expm1(-density);
    s.found = 1 - std::pow(1 - s.p, kRedisEmptyVisits);
    s.advance = s.p > 1e-12 ? s.found / s.p : kRedisEmptyVisits;
    s.moved = s.p > 1e-12 ? s.found * density / s.p : 0;
    return s;
}
double skippingStepVariance(double density, const SkippingStep& s) {
    const double p = s.p, found = s.found, advance = s.advance;
    if (p <= 1e-12)
        return 0;
    const double q = 1 - p;
    double total = 0, mean = 0, square = 0, chance = p;
    for (int r = 0; r < static_cast<int>(kRedisEmptyVisits); ++r, chance *= q) {
        total += chance;
        mean += r * chance;
        square += r * r * chance;
    }
    const double remainderVariance = square / total - (mean / total) * (mean / total);
    const double occupancyVariance = std::exp(-density) * (1 - (1 + density) * std::exp(-density));
    const double steps
        = advance * occupancyVariance + found * remainderVariance / (kRedisEmptyVisits * kRedisEmptyVisits);
    return steps * advance * advance;
}
// The same for a step taken with chance `weight`: it may not come at all.
double weightedStepVariance(double weight, double variance, double advance) {
    return weight * variance + weight * (1 - weight) * advance * advance;
}
} // namespace

bool IndexTableModel::stepSkipsEmpty() const {
    return m_kind != IndexKind::ValkeyHashtable || (m_params.shrinkStepSkipsEmpty && m_targetBuckets < m_buckets);
}

void IndexTableModel::rehashStep(double weight) {
    if (m_targetBuckets == 0) {
        if (m_residualBuckets != 0)
            advanceResidual(weight);
        return;
    }
    // The entries still in the old table sit in the buckets from the rehash index on.
    const double remaining = std::max(1.0, static_cast<double>(m_buckets) - m_rehashIndex);
    const double density = m_oldEntries / remaining;
    double advance = 1, moved = density;
    if (stepSkipsEmpty()) {
        const SkippingStep step = skippingStep(density);
        advance = step.advance;
        moved = step.moved;
        // How far the engine's index is from the mean: each step adds to its variance. It decides whether
        // the old table is gone near the end, for the tables whose footprint counts that (followsRehashSpread).
        if (m_followsRehashSpread) {
            m_indexVariance += weightedStepVariance(weight, skippingStepVariance(density, step), advance);
            m_stepDensity = density;
        }
    } // else hashtable.c rehashStep(): one bucket (and its chain) per step
    m_rehashIndex += weight * advance;
    m_oldEntries = std::max(0.0, m_oldEntries - weight * moved);
    finishRehashIfDone();
}

// The chance of an old array still held below which a residual is dropped.
constexpr double kResidualGone = 1e-3;

double IndexTableModel::stillShort(double lead, double variance, double density) {
    // The engine's index x ~ Normal(-lead, variance) from the array's end; the buckets from x on hold
    // Poisson(density) entries each, so some are left with chance 1 - e^(-density (end - x)). Averaged over x
    // on a grid of standard deviations (the tails past 6 count for nothing).
    const auto leftBehind = [&](double x) { return x < 0 ? -std::expm1(density * x) : 0.0; };
    if (variance <= 0)
        return leftBehind(lead);
    const double sd = std::sqrt(variance);
    // Most tables a footprint asks about are far from the end, one way or the other: no need for the grid.
    if (lead - 6 * sd >= 0)
        return 0;
    if (density * (lead + 6 * sd) < -40)
        return 1;
    double held = 0, weights = 0;
    for (int i = -24; i <= 24; ++i) {
        const double z = i / 4.0;
        const double w = std::exp(-z * z / 2);
        held += w * leftBehind(lead + z * sd);
        weights += w;
    }
    return held / weights;
}

void IndexTableModel::advanceResidual(double weight) {
    // One more step of the engine's rehash, where it has not ended: it advances as the last one did.
    const SkippingStep step = skippingStep(m_residualDensity);
    m_residualLead += weight * step.advance;
    m_residualVariance += weightedStepVariance(weight, skippingStepVariance(m_residualDensity, step), step.advance);
    if (stillShort(m_residualLead, m_residualVariance, m_residualDensity) < kResidualGone)
        m_residualBuckets = 0;
}

// The expected entries left in the old table below which it is taken as empty: the chance that one is still
// there (Poisson: 1 - e^-0.1) is then under 10%, and the table's memory as often held.
constexpr double kLastEntryGone = 0.1;

void IndexTableModel::finishRehashIfDone() {
    // Done when the index has passed the old table, or no entry is left in it (dict.c
    // dictCheckRehashingCompleted, hashtable.c rehashStep: used[0] == 0), which deletes and moves on access
    // can bring about first.
    if (m_rehashIndex >= static_cast<double>(m_buckets) || m_oldEntries < kLastEntryGone) {
        // The engine's index may still be short of the last non-empty bucket: its old array stays, in
        // expectation, until the steps that follow take the chance of that away (advanceResidual).
        m_residualBuckets = 0;
        if (m_indexVariance > 0 && m_stepDensity > 0) {
            m_residualBuckets = m_buckets;
            m_residualLead = m_rehashIndex - static_cast<double>(m_buckets);
            m_residualVariance = m_indexVariance;
            // Ended by the old entries running out before the end (deletes, moves on access): the few
            // expected left are spread over the buckets the index has not reached.
            const double unreached = static_cast<double>(m_buckets) - m_rehashIndex;
            m_residualDensity = unreached > 1 ? m_oldEntries / unreached : m_stepDensity;
            if (stillShort(m_residualLead, m_residualVariance, m_residualDensity) < kResidualGone)
                m_residualBuckets = 0;
        }
        m_indexVariance = 0;
        m_stepDensity = 0;
        m_buckets = m_targetBuckets;
        m_targetBuckets = 0;
        m_rehashIndex = 0;
        m_oldEntries = 0;
    }
}

} // namespace layoutlab
