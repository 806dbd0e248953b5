/** Swallows a Kubernetes API error with the given HTTP status (404: already gone, 409: already there). */
export function ignoreStatus(status: 404 | 409): (error: unknown) => void {
  return (error) => {
    if ((error as { code?: number }).code !== status) throw error;
  };
}
