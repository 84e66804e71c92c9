// SPDX-License-Identifier: MIT
#include "layoutlab/store/run_parameters.h"

#include <fmt/format.h>

namespace layoutlab {

nlohmann::json RunParameters::toJson() const {
    nlohmann::json j { { "trace", trace }, { "layout", layout }, { "allocator", allocator },
        { "thresholds", thresholds }, { "format", format }, { "on_error", onError }, { "key_size", keySize },
        { "threshold_parameter", thresholdParameter } };
    if (!layoutName.empty())
        j["layout_name"] = layoutName;
    for (const auto& [key, value] : extra.items())
        j[key] = value;
    if (layoutFile)
        j["layout_file"] = { { "name", layoutFile->name }, { "path", layoutFile->path },
            { "content_hash", layoutFile->contentHash }, { "text", layoutFile->text } };
    if (cacheGeometry)
        j["cache_geometry"] = *cacheGeometry;
    if (cacheSampleGets)
        j["cache_sample_gets"] = *cacheSampleGets;
    if (startRegions)
        j["start_regions"] = *startRegions;
    if (slabModel) {
        j["slab_model"] = { { "thread_cache", slabModel->threadCache },
            { "page_mover_window", slabModel->pageMoverWindow }, { "expire_cycle", slabModel->expireCycle } };
        if (timelineSamples)
            j["slab_model"]["timeline_samples"] = timelineSamples;
    }
    if (!batchCell.empty())
        j["batch_cell"] = batchCell;
    return j;
}

Expected<RunParameters> RunParameters::fromJson(std::string_view text) {
    const auto j = nlohmann::json::parse(text, nullptr, false);
    if (!j.is_object())
        return dataError("the run's parameters are not a JSON object");
    RunParameters p;
    try {
        for (const auto& [key, value] : j.items()) {
            if (key == "trace")
                p.trace = value.get<std::string>();
            else if (key == "layout")
                p.layout = value.get<std::string>();
            else if (key == "layout_name")
                p.layoutName = value.get<std::string>();
            else if (key == "allocator")
                p.allocator = value.get<std::string>();
            else if (key == "thresholds")
                p.thresholds = value.get<std::vector<std::uint32_t>>();
            else if (key == "format")
                p.format = value.get<std::string>();
            else if (key == "on_error")
                p.onError = value.get<std::string>();
            else if (key == "key_size")
                p.keySize = value.get<std::uint32_t>();
            else if (key == "threshold_parameter")
                p.thresholdParameter = value.get<std::string>();
            else if (key == "layout_file")
                p.layoutFile = LayoutFile { value.value("name", std::string()), value.value("path", std::string()),
                    value.value("content_hash", std::string()), value.value("text", std::string()) };
            else if (key == "cache_geometry")
                p.cacheGeometry = value.get<std::string>();
            else if (key == "cache_sample_gets")
                p.cacheSampleGets = value.get<std::uint32_t>();
            else if (key == "slab_model") {
                SlabModelOptions options;
                options.threadCache = value.at("thread_cache").get<bool>();
                options.pageMoverWindow = value.value("page_mover_window", options.pageMoverWindow);
                // Runs stored before the expire cycles were modelled ran without them.
                options.expireCycle = value.value("expire_cycle", false);
                p.slabModel = options;
                p.timelineSamples = value.value("timeline_samples", std::uint32_t { 0 });
            } else if (key == "start_regions")
                p.startRegions = value.get<std::string>();
            else if (key == "batch_cell")
                p.batchCell = value.get<std::string>();
            else
                p.extra[key] = value;
        }
    } catch (const nlohmann::json::exception& e) {
        return dataError(fmt::format("the run's parameters hold a value of the wrong type: {}", e.what()));
    }
    return p;
}

} // namespace layoutlab
