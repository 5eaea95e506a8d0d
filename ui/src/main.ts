import { mount } from "svelte";
import App from "./App.svelte";
import "./app.css";
import { theme } from "./lib/theme.svelte";

theme.start();

const target = document.getElementById("app");
if (!target) throw new Error("missing #app mount point");
export default mount(App, { target });
