/// The live page's single document: HTML, CSS and script in one string, no outside asset (it works
/// with no network). It reads `GET /events` (server-sent events, each a JSON object of the shape
/// `camctl monitor --json` prints, plus `samples`, `thresholds`, `counters`, `device` and `lost`) and, when the
/// device is a simulator, posts the virtual Camera Control's gestures to `POST /control`.
enum LivePageAssets {
    static let html = #"""
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>CameraControl — live</title>
        <style>
          :root { color-scheme: dark; --bg:#111; --panel:#1c1c1e; --text:#f2f2f7; --dim:#8e8e93; --light:#ffd60a; --full:#ff453a; --touch:#30d158; --slide:#64d2ff; }
          body { margin:0; font:14px -apple-system, system-ui, sans-serif; background:var(--bg); color:var(--text); }
          header { display:flex; gap:16px; align-items:baseline; padding:10px 16px; background:var(--panel); }
          header h1 { font-size:16px; margin:0; }
          #status { color:var(--dim); }
          main { display:grid; grid-template-columns: 2fr 1fr; gap:12px; padding:12px; }
          section { background:var(--panel); border-radius:12px; padding:10px 12px; }
          h2 { font-size:12px; text-transform:uppercase; letter-spacing:.08em; color:var(--dim); margin:0 0 8px; }
          canvas { width:100%; display:block; background:#000; border-radius:8px; }
          #trace { height:220px; }
          #overlay { height:150px; }
          #events { height:220px; overflow:auto; font:12px ui-monospace, monospace; margin:0; padding:0; list-style:none; }
          #events li { padding:2px 0; border-bottom:1px solid #2c2c2e; }
          #events li.capture { color:var(--light); }
          #counters { font:12px ui-monospace, monospace; white-space:pre; }
          #control { height:64px; border-radius:32px; background:linear-gradient(90deg,#2c2c2e,#3a3a3c); position:relative; cursor:grab; touch-action:none; user-select:none; }
          #finger { position:absolute; top:8px; width:48px; height:48px; margin-left:-24px; border-radius:24px; background:var(--touch); opacity:0; }
          #forceBar { height:6px; background:var(--full); width:0; border-radius:3px; margin-top:6px; }
          .buttons { display:flex; gap:8px; margin-top:10px; }
          button { background:#3a3a3c; color:var(--text); border:0; border-radius:8px; padding:8px 12px; font:inherit; cursor:pointer; }
          #preview { width:100%; border-radius:8px; display:none; }
          #virtual { display:none; }
          .hint { color:var(--dim); font-size:12px; }
        </style>
        </head>
        <body>
        <header><h1>CameraControl</h1><span id="device">no device</span><span id="front"></span><span id="status">connecting…</span></header>
        <main>
          <div>
            <section><h2>Force, touch and slide</h2><canvas id="trace" width="900" height="220"></canvas></section>
            <section style="margin-top:12px"><h2>Capture events</h2><ul id="events"></ul></section>
          </div>
          <div>
            <section><h2>Overlay</h2><canvas id="overlay" width="420" height="150"></canvas></section>
            <section id="virtual" style="margin-top:12px"><h2>Virtual Camera Control</h2>
              <div id="control" title="press and drag down for force, sideways to slide"><div id="finger"></div></div>
              <div id="forceBar"></div>
              <div class="hint">press: touch · drag down or wheel: force · drag sideways: slide</div>
              <div id="controlNote" class="hint"></div>
              <div class="buttons">
                <button data-step="full-click">click</button>
                <button data-step="double-light-press">double light press</button>
                <button data-step="button volume-up">vol +</button>
                <button data-step="button volume-down">vol −</button>
                <button data-step="button action">action</button>
              </div>
            </section>
            <section style="margin-top:12px"><h2>Camera</h2><img id="preview" alt="camera preview"><div id="nocamera" class="hint">no camera attached</div></section>
            <section style="margin-top:12px"><h2>Link</h2><div id="counters">—</div></section>
          </div>
        </main>
        <script>
        "use strict";
        const state = { samples: [], thresholds: null, overlay: { visible:false, control:"", value:"", picker:false }, lastT: 0 };
        const WINDOW_MS = 5000, MAX_SAMPLES = 5000, MAX_EVENTS = 200;
        const $ = (id) => document.getElementById(id);
        function addEvent(text, cls) {
          const li = document.createElement("li");
          li.textContent = text; if (cls) li.className = cls;
          const list = $("events"); list.prepend(li);
          while (list.children.length > MAX_EVENTS) list.lastChild.remove();
        }
        function pushSample(t, force, touch, position) {
          state.samples.push({ t, force, touch, position }); state.lastT = Math.max(state.lastT, t);
          if (state.samples.length > MAX_SAMPLES) state.samples.splice(0, state.samples.length - MAX_SAMPLES);
        }
        function handle(m) {
          // Device time in ms: events carry deviceTimeUs (a string for 64 bits), samples their own.
          const t = m.deviceTimeUs !== undefined ? Number(m.deviceTimeUs) / 1000 : state.lastT;
          switch (m.type) {
            case "device": $("device").textContent = m.name || "device"; $("virtual").style.display = m.simulator ? "block" : "none";
              if (m.camera) { $("preview").src = m.camera; $("preview").style.display = "block"; $("nocamera").style.display = "none"; }
              break;
            case "thresholds": state.thresholds = m; break;
            case "samples": for (const [ts, force, touch, position] of m.records || []) pushSample(ts, force, touch, position); break;
            case "input": break;
            case "capture": addEvent(`${(m.tMs ?? 0).toFixed(1)} ms  ${m.phase} ${m.role} ${m.source}${m.captured ? "  → CAPTURE" : ""}`, "capture"); break;
            case "gesture": if (m.kind !== "slide-changed") addEvent(`${(m.tMs ?? 0).toFixed(1)} ms  ${m.kind} ${m.source}`); break;
            case "photo": addEvent(`${m.isVideo ? "video" : "photo"} #${m.sequenceNumber}`, "capture"); break;
            case "overlay": overlayEffect(m.effect || ""); break;
            case "counters": $("counters").textContent = Object.entries(m.values || {}).map(([k, v]) => `${k.padEnd(22)} ${v}`).join("\n"); break;
            case "lost": $("status").textContent = "device lost — reconnecting"; break;
            case "front": $("front").textContent = m.text || ""; break;
          }
        }
        function overlayEffect(effect) {
          const words = effect.split(" ");
          const o = state.overlay;
          switch (words[0]) {
            case "overlay-shown": o.visible = true; o.control = words[1] || ""; o.picker = false; break;
            case "overlay-hidden": o.visible = false; o.picker = false; break;
            case "value-changed": o.control = words[1] || o.control; o.value = words[2] || ""; break;
            case "picker-opened": o.picker = true; o.index = Number(words[1] || 0); break;
            case "picker-moved": o.index = Number(words[1] || 0); break;
            case "picker-closed": case "control-selected": o.picker = false; if (words[1]) o.control = words[1]; break;
          }
        }
        function drawTrace() {
          const c = $("trace"), g = c.getContext("2d"), w = c.width, h = c.height;
          g.clearRect(0, 0, w, h);
          const end = state.lastT, start = end - WINDOW_MS, maxForce = 4000;
          const y = (f) => h - 10 - (f / maxForce) * (h - 20), x = (t) => ((t - start) / WINDOW_MS) * w;
          const th = state.thresholds;
          if (th) {
            for (const [press, release, color] of [[th.lightPressMn, th.lightReleaseMn, "255,214,10"], [th.fullPressMn, th.fullReleaseMn, "255,69,58"]]) {
              if (!press) continue;
              g.fillStyle = `rgba(${color},0.15)`; g.fillRect(0, y(press), w, y(release || press) - y(press));
              g.strokeStyle = `rgb(${color})`; g.beginPath(); g.moveTo(0, y(press)); g.lineTo(w, y(press)); g.stroke();
            }
          }
          const visible = state.samples.filter((s) => s.t >= start);
          g.fillStyle = "rgba(48,209,88,0.25)";
          for (const s of visible) if (s.touch) g.fillRect(x(s.t), h - 8, 3, 8);
          g.strokeStyle = "#64d2ff"; g.beginPath();
          visible.forEach((s, i) => { const py = 10 + (1 - s.position) * 40; i ? g.lineTo(x(s.t), py) : g.moveTo(x(s.t), py); }); g.stroke();
          g.strokeStyle = "#f2f2f7"; g.lineWidth = 2; g.beginPath();
          visible.forEach((s, i) => (i ? g.lineTo(x(s.t), y(s.force)) : g.moveTo(x(s.t), y(s.force)))); g.stroke(); g.lineWidth = 1;
        }
        function drawOverlay() {
          const c = $("overlay"), g = c.getContext("2d"), w = c.width, h = c.height, o = state.overlay;
          g.clearRect(0, 0, w, h); c.dataset.visible = String(o.visible);
          if (!o.visible) { g.fillStyle = "#48484a"; g.fillText("overlay hidden", 12, 20); return; }
          g.fillStyle = "rgba(255,255,255,0.08)"; g.beginPath(); g.roundRect(8, 30, w - 16, 80, 40); g.fill();
          g.fillStyle = "#ffd60a"; g.font = "600 22px system-ui"; g.textAlign = "center";
          g.fillText(o.picker ? `choose control (${o.index ?? 0})` : `${o.control} ${o.value}`, w / 2, 80);
          g.strokeStyle = "#f2f2f7"; g.beginPath();
          for (let i = 0; i <= 20; i++) { const px = 20 + i * (w - 40) / 20; g.moveTo(px, 100); g.lineTo(px, i % 5 ? 104 : 108); }
          g.stroke(); g.textAlign = "start"; g.font = "14px system-ui";
        }
        function frame() { drawTrace(); drawOverlay(); requestAnimationFrame(frame); }
        function connect() {
          const source = new EventSource("/events");
          source.onopen = () => { $("status").textContent = "live"; };
          source.onerror = () => { $("status").textContent = "disconnected — retrying"; };
          source.onmessage = (e) => { try { handle(JSON.parse(e.data)); } catch (err) { console.warn(err); } };
        }
        // The virtual control: its gestures become scenario steps played through SimulatorService.
        let pressing = null;
        // One step after the other: each post waits for the one before, so they reach the device in order. A step
        // refused (409: not a simulator, or an app has the device under camctl serve; 422) shows why.
        let posting = Promise.resolve();
        function post(step) {
          posting = posting.catch(() => {})
            .then(() => fetch("/control", { method: "POST", headers: { "Content-Type": "text/plain" }, body: step }))
            .then(async (r) => { $("controlNote").textContent = r.ok ? "" : `${step}: ${(await r.text()).trim()}`; });
          return posting;
        }
        function position(ev) { const r = $("control").getBoundingClientRect(); return Math.min(1, Math.max(0, (ev.clientX - r.left) / r.width)); }
        function showFinger(p, force) { const f = $("finger"); f.style.opacity = p === null ? 0 : 1; if (p !== null) f.style.left = `${p * 100}%`; $("forceBar").style.width = `${Math.min(100, force / 40)}%`; }
        $("control").addEventListener("pointerdown", (ev) => {
          $("control").setPointerCapture(ev.pointerId);
          pressing = { y0: ev.clientY, p: position(ev), force: 150, sent: 0 };
          showFinger(pressing.p, pressing.force); post(`touch at=${pressing.p.toFixed(3)}`);
        });
        $("control").addEventListener("pointermove", (ev) => {
          if (!pressing) return;
          const p = position(ev), force = Math.max(150, Math.min(4000, 150 + (ev.clientY - pressing.y0) * 30));
          const now = performance.now(); if (now - pressing.sent < 40) return; pressing.sent = now;
          if (Math.abs(p - pressing.p) > 0.01) { post(`slide to=${p.toFixed(3)} over=40ms force=${Math.round(force)}mN`); pressing.p = p; }
          else if (Math.abs(force - pressing.force) > 50) post(`force ${Math.round(force)}mN over=30ms`);
          pressing.force = force; showFinger(p, force);
        });
        $("control").addEventListener("wheel", (ev) => {
          if (!pressing) return; ev.preventDefault();
          pressing.force = Math.max(150, Math.min(4000, pressing.force - ev.deltaY * 5));
          showFinger(pressing.p, pressing.force); post(`force ${Math.round(pressing.force)}mN over=30ms`);
        }, { passive: false });
        const lift = () => { if (!pressing) return; pressing = null; showFinger(null, 0); post("release"); };
        $("control").addEventListener("pointerup", lift); $("control").addEventListener("pointercancel", lift);
        document.querySelectorAll("button[data-step]").forEach((b) => b.addEventListener("click", () => post(b.dataset.step)));
        connect(); requestAnimationFrame(frame);
        </script>
        </body>
        </html>
        """#
}
