// Synchronised orthographic 3D wireframe views on <canvas>: one shared camera, drag to rotate, shift/right-drag
// to pan, wheel to zoom. Coordinates are normalised (bounding-box diagonal 1, centred at 0), z up.
"use strict";
const Viewer = (() => {
  const HOME = { yaw: -Math.PI / 4, pitch: 0.55, zoom: 1, panX: 0, panY: 0 };
  const camera = { ...HOME };
  const views = [];
  const COLORS = { gt: "#222222", gtUnder: "#a9a9a9", candidate: "#1f5fd1", isolated: "#d62728" };

  function degrees(graph) {
    const deg = new Array(graph.vertices.length).fill(0);
    for (const [a, b] of graph.edges) { deg[a] += 1; deg[b] += 1; }
    return deg;
  }

  function projector(w, h) {
    const cy = Math.cos(camera.yaw), sy = Math.sin(camera.yaw);
    const cp = Math.cos(camera.pitch), sp = Math.sin(camera.pitch);
    const s = 0.92 * Math.min(w, h) * camera.zoom;
    return ([x, y, z]) => {
      const x1 = x * cy - y * sy, y1 = x * sy + y * cy;
      const z2 = y1 * sp + z * cp;
      return [w / 2 + camera.panX + s * x1, h / 2 + camera.panY - s * z2];
    };
  }

  function drawGraph(ctx, graph, project, color, width, markers) {
    if (!graph) return;
    const pts = graph.vertices.map(project);
    ctx.strokeStyle = color; ctx.lineWidth = width; ctx.lineCap = "round";
    ctx.beginPath();
    for (const [a, b] of graph.edges) { ctx.moveTo(pts[a][0], pts[a][1]); ctx.lineTo(pts[b][0], pts[b][1]); }
    ctx.stroke();
    if (!markers) return;
    const deg = degrees(graph);
    ctx.fillStyle = color;
    pts.forEach((p, i) => {
      if (deg[i] > 0) { ctx.beginPath(); ctx.arc(p[0], p[1], 2.2, 0, 2 * Math.PI); ctx.fill(); }
    });
    ctx.strokeStyle = COLORS.isolated; ctx.lineWidth = 1.6;
    pts.forEach((p, i) => {
      if (deg[i] === 0) { ctx.beginPath(); ctx.arc(p[0], p[1], 4.5, 0, 2 * Math.PI); ctx.stroke(); }
    });
  }

  function draw(view) {
    const { canvas, layers } = view;
    const ratio = window.devicePixelRatio || 1;
    const w = canvas.clientWidth, h = canvas.clientHeight;
    if (canvas.width !== Math.round(w * ratio)) { canvas.width = Math.round(w * ratio); canvas.height = Math.round(h * ratio); }
    const ctx = canvas.getContext("2d");
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    ctx.clearRect(0, 0, w, h);
    const project = projector(w, h);
    for (const layer of layers) {
      if (layer.hidden && layer.hidden()) continue;
      drawGraph(ctx, layer.graph, project, layer.color, layer.width, layer.markers);
    }
  }

  function redraw() { views.forEach(draw); }

  function attach(canvas) {
    const view = { canvas, layers: [] };
    views.push(view);
    let drag = null;
    canvas.addEventListener("contextmenu", (e) => e.preventDefault());
    canvas.addEventListener("mousedown", (e) => {
      drag = { x: e.clientX, y: e.clientY, pan: e.shiftKey || e.button === 2 };
      canvas.style.cursor = "grabbing";
    });
    window.addEventListener("mouseup", () => { drag = null; canvas.style.cursor = "grab"; });
    window.addEventListener("mousemove", (e) => {
      if (!drag) return;
      const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
      drag.x = e.clientX; drag.y = e.clientY;
      if (drag.pan) { camera.panX += dx; camera.panY += dy; }
      else {
        camera.yaw += dx * 0.01;
        camera.pitch = Math.max(-Math.PI / 2, Math.min(Math.PI / 2, camera.pitch + dy * 0.01));
      }
      redraw();
    });
    canvas.addEventListener("wheel", (e) => {
      e.preventDefault();
      camera.zoom = Math.max(0.2, Math.min(20, camera.zoom * Math.exp(-e.deltaY * 0.0015)));
      redraw();
    }, { passive: false });
    return view;
  }

  function reset() { Object.assign(camera, HOME); redraw(); }

  return { attach, redraw, reset, COLORS, camera };
})();
