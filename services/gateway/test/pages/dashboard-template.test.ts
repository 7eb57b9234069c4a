import { html, SafeHtml } from "../../src/pages/dashboard/template";

describe("the dashboard's templates", () => {
  it("escape every interpolated value, in text and in attributes", () => {
    const evil = `"><script>alert(1)</script>'`;
    const out = html`<p title="${evil}">${evil}</p>`.markup;
    expect(out).not.toContain("<script>");
    expect(out).toBe(`<p title="&#34;&#62;&#60;script&#62;alert(1)&#60;/script&#62;&#39;">&#34;&#62;&#60;script&#62;alert(1)&#60;/script&#62;&#39;</p>`);
  });

  it("keep markup made by html itself, join arrays, and render nothing for null, undefined and false", () => {
    const items = ["a<b", "c"].map((t) => html`<li>${t}</li>`);
    // prettier-ignore
    const out = html`<ul>${items}</ul>${null}${undefined}${false}${0}`.markup;
    expect(out).toBe("<ul><li>a&#60;b</li><li>c</li></ul>0");
    expect(html`${new SafeHtml("<b>ok</b>")}`.markup).toBe("<b>ok</b>");
  });
});
