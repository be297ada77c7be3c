import { mount } from "svelte";
import App from "./App.svelte";
import "./app.css";
import { applyTheme, savedTheme } from "./lib/state/theme";

applyTheme(savedTheme());

const target = document.getElementById("app");
if (target) mount(App, { target });
