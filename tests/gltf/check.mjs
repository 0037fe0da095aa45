// SPDX-License-Identifier: GPL-3.0-or-later
// What two readers we did not write make of glTF files: the Khronos glTF
// Validator's report, and what three.js (GLTFLoader, AnimationMixer) shows:
// every mesh primitive's vertex positions in world space (skinned as three
// skins them) and every node's world matrix, at given times of given
// animations. One process for many files (tests/gltf_reading.py runs it).
//
//   node check.mjs JOBS.json
//
// JOBS.json: [{"file": path, "out": path prefix, "runs": [{"animation": index or -1, "times": [seconds]}]}]
// stdout: one JSON line per job: {"file", "validator": {"errors", "warnings", "messages": [...]},
//   "prims": [[mesh, primitive, vertex count]...], "nodes": [node index...], "error"}
// and per run r the file OUT.r.f64: for each time, every primitive's positions (count x 3), then every
// node's world matrix (16, column-major), float64.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import * as THREE from 'three';
import { GLTFLoader } from 'three/examples/jsm/loaders/GLTFLoader.js';

const require = createRequire(import.meta.url);
const validator = require('gltf-validator');

// The images the tests' source files name are mostly not in the repository: the validator gets a
// stand-in of the named type for a missing one (a 1x1 PNG; a JPEG header), so that the document itself
// is what is validated. The report counts them.
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==', 'base64');
const JPEG = Buffer.from('/9j/4AAQSkZJRgABAQEASABIAAD/2wBDAP//////////////////////////////////////////////////////////////////////////////////////wgALCAABAAEBAREA/8QAFBABAAAAAAAAAAAAAAAAAAAAAP/aAAgBAQABPxA=', 'base64');

async function validate(file, bytes) {
  let standIns = 0;
  const dir = path.dirname(file);
  const report = await validator.validateBytes(new Uint8Array(bytes), {
    uri: path.basename(file), maxIssues: 0, writeTimestamp: false,
    externalResourceFunction: (uri) => new Promise((resolve, reject) => {
      const p = path.resolve(dir, decodeURIComponent(uri));
      fs.readFile(p, (err, data) => {
        if (!err) { resolve(new Uint8Array(data)); return; }
        const ext = path.extname(p).toLowerCase();
        if (ext === '.bin') { reject(err.toString()); return; }
        standIns += 1;
        resolve(new Uint8Array(ext === '.png' ? PNG : ext === '.jpg' || ext === '.jpeg' ? JPEG : Buffer.from('not an image')));
      });
    }),
  });
  const messages = report.issues.messages.filter((m) => m.severity <= 1)
    .map((m) => `${m.severity === 0 ? 'error' : 'warning'} ${m.code} ${m.pointer || ''}: ${m.message}`);
  return { errors: report.issues.numErrors, warnings: report.issues.numWarnings, messages, standIns };
}

// The asset as one GLB without images (three.js loads images through the DOM, which Node has not).
function glbWithoutImages(file, bytes) {
  let json, bin;
  if (bytes.readUInt32LE(0) === 0x46546c67) {
    const jsonLength = bytes.readUInt32LE(12);
    json = JSON.parse(bytes.subarray(20, 20 + jsonLength).toString('utf8'));
    const at = 20 + jsonLength;
    bin = at < bytes.length ? bytes.subarray(at + 8, at + 8 + bytes.readUInt32LE(at)) : Buffer.alloc(0);
  } else {
    json = JSON.parse(bytes.toString('utf8'));
    bin = json.buffers && json.buffers.length
      ? fs.readFileSync(path.resolve(path.dirname(file), decodeURIComponent(json.buffers[0].uri))) : Buffer.alloc(0);
    if (json.buffers && json.buffers.length) delete json.buffers[0].uri;
  }
  delete json.images; delete json.textures; delete json.samplers;
  for (const m of json.materials || []) {
    for (const holder of [m, m.pbrMetallicRoughness || {}]) {
      for (const key of Object.keys(holder)) if (key.endsWith('Texture')) delete holder[key];
    }
  }
  let text = Buffer.from(JSON.stringify(json), 'utf8');
  text = Buffer.concat([text, Buffer.alloc((4 - text.length % 4) % 4, 0x20)]);
  const data = Buffer.concat([bin, Buffer.alloc((4 - bin.length % 4) % 4, 0)]);
  const parts = [Buffer.alloc(12), Buffer.alloc(8), text];
  if (data.length) parts.push(Buffer.alloc(8), data);
  const out = Buffer.concat(parts);
  out.writeUInt32LE(0x46546c67, 0); out.writeUInt32LE(2, 4); out.writeUInt32LE(out.length, 8);
  out.writeUInt32LE(text.length, 12); out.writeUInt32LE(0x4e4f534a, 16);
  if (data.length) { out.writeUInt32LE(data.length, 20 + text.length); out.writeUInt32LE(0x004e4942, 24 + text.length); }
  return out.buffer.slice(out.byteOffset, out.byteOffset + out.length);
}

function load(glb) {
  return new Promise((resolve, reject) => new GLTFLoader().parse(glb, '', resolve, reject));
}

async function sample(glb, run, out) {
  const gltf = await load(glb);          // a fresh load per run: no state left from another animation
  const scene = gltf.scene;
  const assoc = gltf.parser.associations;
  const prims = [];
  const nodes = [];
  scene.traverse((o) => {
    const a = assoc.get(o);
    if (!a) return;
    if (o.isMesh && a.primitives !== undefined) prims.push([a.meshes, a.primitives, o]);
    if (a.nodes !== undefined) nodes.push([a.nodes, o]);
  });
  prims.sort((x, y) => x[0] - y[0] || x[1] - y[1]);
  nodes.sort((x, y) => x[0] - y[0]);
  const mixer = new THREE.AnimationMixer(scene);
  if (run.animation >= 0) {
    const action = mixer.clipAction(gltf.animations[run.animation]);
    action.setLoop(THREE.LoopOnce);
    action.clampWhenFinished = true;
    action.play();
  }
  const per = prims.reduce((n, p) => n + 3 * p[2].geometry.attributes.position.count, 0) + 16 * nodes.length;
  const data = new Float64Array(per * run.times.length);
  const v = new THREE.Vector3();
  let k = 0;
  for (const t of run.times) {
    mixer.setTime(t);
    scene.updateMatrixWorld(true);
    for (const [, , o] of prims) {
      const pos = o.geometry.attributes.position;
      for (let i = 0; i < pos.count; i++) {
        v.fromBufferAttribute(pos, i);
        if (o.isSkinnedMesh) o.applyBoneTransform(i, v);
        v.applyMatrix4(o.matrixWorld);
        data[k++] = v.x; data[k++] = v.y; data[k++] = v.z;
      }
    }
    for (const [, o] of nodes) {
      for (const x of o.matrixWorld.elements) data[k++] = x;
    }
  }
  fs.writeFileSync(out, Buffer.from(data.buffer));
  return { prims: prims.map((p) => [p[0], p[1], p[2].geometry.attributes.position.count]), nodes: nodes.map((n) => n[0]) };
}

const jobs = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
for (const job of jobs) {
  const result = { file: job.file };
  try {
    const bytes = fs.readFileSync(job.file);
    result.validator = await validate(job.file, bytes);
    const glb = glbWithoutImages(job.file, bytes);
    for (let r = 0; r < job.runs.length; r++) {
      Object.assign(result, await sample(glb, job.runs[r], `${job.out}.${r}.f64`));
    }
  } catch (err) {
    result.error = String(err && err.stack ? err.stack : err);
  }
  process.stdout.write(JSON.stringify(result) + '\n');
}
