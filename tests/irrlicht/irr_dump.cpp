// SPDX-License-Identifier: GPL-3.0-or-later
//
// irr_dump: plays a .X file in the Irrlicht engine (the system's libIrrlicht,
// 1.8.5 on Debian) and dumps the skinned vertex positions at given frames.
// A test tool of legacy_skin_io (tests/irrlicht_reading.py builds and runs it).
//
//     irr_dump FILE.x OUT.bin FRAME [FRAME ...]        (frames are floats)
//
// The mesh is loaded through the scene manager (smgr->getMesh) of a device
// with the NULL video driver (no window) and must be a skinned mesh
// (EAMT_SKINNED, what the .X loader makes). For every FRAME, in the order
// given: animateMesh(FRAME, 1.0f), skinMesh(), then every vertex of every
// mesh buffer transformed by the buffer's Transformation (the joint matrix of
// a rigid mesh attached to a frame; identity for a skinned mesh): world
// space, which is the .X file's own (left-handed) coordinates.
//
// Output (OUT.bin), little-endian:
//
//   8 bytes    "IRRDUMP1"
//   uint32     N, the length of the JSON header
//   N bytes    JSON header (ASCII: bytes >= 0x80 of names and log text are
//              written as \u00XX, i.e. read as Latin-1)
//   float32    static     (V, 3)      every buffer's vertex positions as loaded,
//                                     before any animation, in buffer space
//                                     (no Transformation applied)
//   float32    positions  (F, V, 3)   world positions at each FRAME
//   float32    joints     (F, J, 16)  each joint's GlobalAnimatedMatrix at each
//                                     FRAME, Irrlicht's memory order (the .X
//                                     file's row-vector layout: translation
//                                     in elements 12..14)
//
// V is the sum of the buffers' vertex counts (buffers in order), F the
// number of FRAMEs, J the number of joints. The JSON header holds:
//
//   "format": 1, "file", "mesh_type" ("skinned"), "frame_count"
//   (getFrameCount()), "animation_speed", "frames" (the FRAMEs),
//   "materials" (the buffers' material count: one per buffer),
//   "buffers": [{"vertices", "indices", "vertex_type", "attached_joint"
//   (-1: none), "transformation" (16 numbers, after loading)}],
//   "joints": [names, in getAllJoints() order], "joint_parents" (-1: root),
//   "vertices" (V), "log": [{"level": "debug|information|warning|error|none",
//   "text"}] (every message Irrlicht logged, from device creation on; the
//   logger is set to its most verbose level).
//
// A file Irrlicht cannot load: exit status 2 and one line on stderr
// ("irr_dump: Irrlicht cannot load FILE: <the warnings it logged, joined by |>"); a mesh that is
// not skinned: exit status 3; bad arguments: exit status 1.
#include <irrlicht.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace irr;

namespace {

struct LogLine {
    ELOG_LEVEL level;
    std::string text;
};

// Catches every log message (and keeps Irrlicht from printing it).
class LogCatcher : public IEventReceiver {
public:
    std::vector<LogLine> lines;

    virtual bool OnEvent(const SEvent& event) {
        if (event.EventType != EET_LOG_TEXT_EVENT)
            return false;
        LogLine line;
        line.level = event.LogEvent.Level;
        line.text = event.LogEvent.Text ? event.LogEvent.Text : "";
        lines.push_back(line);
        return true;
    }
};

const char* levelName(ELOG_LEVEL level) {
    switch (level) {
    case ELL_DEBUG: return "debug";
    case ELL_INFORMATION: return "information";
    case ELL_WARNING: return "warning";
    case ELL_ERROR: return "error";
    default: return "none";
    }
}

std::string jsonString(const std::string& s) {
    std::string out = "\"";
    char buf[8];
    for (size_t i = 0; i < s.size(); ++i) {
        const unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            out += '\\';
            out += (char)c;
        } else if (c < 0x20 || c >= 0x7f) {
            std::snprintf(buf, sizeof buf, "\\u%04x", (unsigned)c);
            out += buf;
        } else {
            out += (char)c;
        }
    }
    return out + "\"";
}

std::string jsonNumber(double v) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.9g", v);
    std::string s(buf);
    if (s.find_first_of("0123456789") == std::string::npos)   // inf, nan: not JSON
        return "null";
    return s;
}

void putFloats(std::vector<float>& out, const core::vector3df& v) {
    out.push_back(v.X);
    out.push_back(v.Y);
    out.push_back(v.Z);
}

bool writeAll(FILE* f, const void* data, size_t bytes) {
    return bytes == 0 || std::fwrite(data, 1, bytes, f) == bytes;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 4) {
        std::fprintf(stderr, "usage: irr_dump FILE.x OUT.bin FRAME [FRAME ...]\n");
        return 1;
    }
    const char* path = argv[1];
    const char* outPath = argv[2];
    std::vector<float> frames;
    for (int i = 3; i < argc; ++i) {
        char* end = 0;
        const double v = std::strtod(argv[i], &end);
        if (end == argv[i] || *end != '\0') {
            std::fprintf(stderr, "irr_dump: frame %s is not a number\n", argv[i]);
            return 1;
        }
        frames.push_back((float)v);
    }

    LogCatcher log;
    IrrlichtDevice* device = createDevice(video::EDT_NULL, core::dimension2d<u32>(64, 64), 16,
                                          false, false, false, &log);
    if (!device) {
        std::fprintf(stderr, "irr_dump: cannot create an Irrlicht device with the NULL driver\n");
        return 2;
    }
    device->getLogger()->setLogLevel(ELL_DEBUG);
    scene::ISceneManager* smgr = device->getSceneManager();

    const size_t logBeforeLoad = log.lines.size();
    scene::IAnimatedMesh* animated = smgr->getMesh(path);
    if (!animated) {
        std::string why;
        for (size_t i = logBeforeLoad; i < log.lines.size(); ++i) {
            if (log.lines[i].level >= ELL_WARNING)
                why += (why.empty() ? "" : " | ") + log.lines[i].text;
        }
        if (why.empty())
            why = "no loader took it";
        for (size_t i = 0; i < why.size(); ++i)
            if (why[i] == '\n' || why[i] == '\r')
                why[i] = ' ';
        std::fprintf(stderr, "irr_dump: Irrlicht cannot load %s: %s\n", path, why.c_str());
        device->drop();
        return 2;
    }
    if (animated->getMeshType() != scene::EAMT_SKINNED) {
        std::fprintf(stderr, "irr_dump: %s: not a skinned mesh (E_ANIMATED_MESH_TYPE %d)\n", path,
                     (int)animated->getMeshType());
        device->drop();
        return 3;
    }
    scene::ISkinnedMesh* mesh = static_cast<scene::ISkinnedMesh*>(animated);
    core::array<scene::SSkinMeshBuffer*>& buffers = mesh->getMeshBuffers();
    core::array<scene::ISkinnedMesh::SJoint*>& joints = mesh->getAllJoints();
    const u32 B = buffers.size();
    const u32 J = joints.size();

    std::vector<int> attached(B, -1);
    std::vector<int> parents(J, -1);
    for (u32 j = 0; j < J; ++j) {
        for (u32 k = 0; k < joints[j]->AttachedMeshes.size(); ++k)
            if (joints[j]->AttachedMeshes[k] < B)
                attached[joints[j]->AttachedMeshes[k]] = (int)j;
        for (u32 c = 0; c < joints[j]->Children.size(); ++c)
            for (u32 i = 0; i < J; ++i)
                if (joints[i] == joints[j]->Children[c])
                    parents[i] = (int)j;
    }

    u32 V = 0;
    std::vector<float> staticPos;
    std::string bufferJson = "[";
    for (u32 b = 0; b < B; ++b) {
        scene::SSkinMeshBuffer* buf = buffers[b];
        const u32 n = buf->getVertexCount();
        V += n;
        for (u32 i = 0; i < n; ++i)
            putFloats(staticPos, buf->getPosition(i));
        std::string m = "[";
        for (int k = 0; k < 16; ++k)
            m += (k ? "," : "") + jsonNumber(buf->Transformation[k]);
        char head[160];
        std::snprintf(head, sizeof head, "%s{\"vertices\":%u,\"indices\":%u,\"vertex_type\":%d,\"attached_joint\":%d,",
                      b ? "," : "", n, buf->getIndexCount(), (int)buf->getVertexType(), attached[b]);
        bufferJson += std::string(head) + "\"transformation\":" + m + "]}";
    }
    bufferJson += "]";

    std::vector<float> positions;
    std::vector<float> jointMatrices;
    positions.reserve((size_t)frames.size() * V * 3);
    for (size_t f = 0; f < frames.size(); ++f) {
        mesh->animateMesh(frames[f], 1.0f);
        mesh->skinMesh();
        for (u32 b = 0; b < B; ++b) {
            scene::SSkinMeshBuffer* buf = buffers[b];
            const core::matrix4& t = buf->Transformation;
            for (u32 i = 0; i < buf->getVertexCount(); ++i) {
                core::vector3df p = buf->getPosition(i);
                t.transformVect(p);
                putFloats(positions, p);
            }
        }
        for (u32 j = 0; j < J; ++j)
            for (int k = 0; k < 16; ++k)
                jointMatrices.push_back(joints[j]->GlobalAnimatedMatrix[k]);
    }

    std::string json = "{\"format\":1,\"file\":" + jsonString(path) + ",\"mesh_type\":\"skinned\"";
    json += ",\"frame_count\":" + jsonNumber(mesh->getFrameCount());
    json += ",\"animation_speed\":" + jsonNumber(mesh->getAnimationSpeed());
    json += ",\"frames\":[";
    for (size_t f = 0; f < frames.size(); ++f)
        json += (f ? "," : "") + jsonNumber(frames[f]);
    json += "],\"materials\":" + jsonNumber(B);
    json += ",\"buffers\":" + bufferJson;
    json += ",\"vertices\":" + jsonNumber(V);
    json += ",\"joints\":[";
    for (u32 j = 0; j < J; ++j)
        json += (j ? "," : "") + jsonString(joints[j]->Name.c_str());
    json += "],\"joint_parents\":[";
    for (u32 j = 0; j < J; ++j)
        json += (j ? "," : "") + jsonNumber(parents[j]);
    json += "],\"log\":[";
    for (size_t i = 0; i < log.lines.size(); ++i)
        json += std::string(i ? "," : "") + "{\"level\":\"" + levelName(log.lines[i].level) +
                "\",\"text\":" + jsonString(log.lines[i].text) + "}";
    json += "]}";

    FILE* out = std::fopen(outPath, "wb");
    if (!out) {
        std::fprintf(stderr, "irr_dump: cannot write %s\n", outPath);
        device->drop();
        return 1;
    }
    const unsigned char size[4] = {(unsigned char)(json.size() & 0xff), (unsigned char)((json.size() >> 8) & 0xff),
                                   (unsigned char)((json.size() >> 16) & 0xff),
                                   (unsigned char)((json.size() >> 24) & 0xff)};
    // (x86 and ARM Linux are little-endian: the float32 arrays are written as they lie in memory)
    bool ok = writeAll(out, "IRRDUMP1", 8) && writeAll(out, size, 4) && writeAll(out, json.data(), json.size()) &&
              writeAll(out, staticPos.data(), staticPos.size() * sizeof(float)) &&
              writeAll(out, positions.data(), positions.size() * sizeof(float)) &&
              writeAll(out, jointMatrices.data(), jointMatrices.size() * sizeof(float));
    ok = (std::fclose(out) == 0) && ok;
    device->drop();
    if (!ok) {
        std::fprintf(stderr, "irr_dump: cannot write %s\n", outPath);
        return 1;
    }
    return 0;
}
