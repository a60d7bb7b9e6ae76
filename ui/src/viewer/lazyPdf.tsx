// pdf.js is most of the bundle's weight; it loads only when a PDF is first shown.

import { lazy, Suspense, type ComponentProps } from "react";
import { Spinner } from "../components/ui";

const PdfView = lazy(() => import("./PdfView").then((m) => ({ default: m.PdfView })));

export function LazyPdfView(props: ComponentProps<typeof PdfView>) {
  return (
    <Suspense fallback={<Spinner label="Loading the PDF viewer…" />}>
      <PdfView {...props} />
    </Suspense>
  );
}
