namespace MuxWatch.Service.Api;

/// <summary><c>/healthz</c>: the process is up and serving.</summary>
internal static class HealthEndpoints
{
    public static IEndpointRouteBuilder MapHealth(this IEndpointRouteBuilder endpoints)
    {
        endpoints.MapGet("/healthz", () => Results.Text("ok\n", "text/plain"));
        return endpoints;
    }
}
