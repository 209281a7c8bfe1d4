using MuxWatch.Tool;
using MuxWatch.Tool.Commands;

// muxwatch explain ... | muxwatch serve ... | muxwatch (serve, as the container and `dotnet run` start it)
return await CommandLine.RunAsync(args, Console.In, Console.Out, Console.Error, ServeAsync);

static async Task<int> ServeAsync(string[] settings)
{
    SidecarHosting.PrepareProcess();

    // The content root is the app's folder, not the working directory: appsettings.json (port 9401, log
    // levels) applies wherever the service is started from.
    var builder = WebApplication.CreateSlimBuilder(new WebApplicationOptions { Args = settings, ContentRootPath = AppContext.BaseDirectory });
    builder.AddMuxWatchSidecar();
    return await StartupErrors.RunAsync(builder, app => app.MapMuxWatchSidecar());
}
