import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { AfterFirstRender } from "./after-first-render";

describe("AfterFirstRender", () => {
  it("leaves its children out of the first render, so they never hold up the frame that shows what surrounds them", () => {
    const html = renderToStaticMarkup(
      <article>
        <h2>Plan from ada</h2>
        <AfterFirstRender>
          <p>Recent activity</p>
        </AfterFirstRender>
      </article>,
    );
    expect(html).toBe("<article><h2>Plan from ada</h2></article>");
  });
});
