// Grows a textarea with its content (or, empty, its placeholder) so that
// none of it is cut off and <main> stays the only element that scrolls
// vertically (WebKitGTK has no `field-sizing: content`).
export function autogrow(el: HTMLTextAreaElement, _value: string) {
  const fit = () => {
    if (el.offsetParent === null) return; // hidden tab panel: fit once it shows
    el.style.height = "auto";
    el.style.height = `${el.scrollHeight + el.offsetHeight - el.clientHeight}px`;
  };
  fit();
  const observer = new ResizeObserver(() => fit());
  observer.observe(el.parentElement ?? el);
  return {
    update: fit,
    destroy: () => observer.disconnect(),
  };
}
