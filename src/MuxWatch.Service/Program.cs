using MuxWatch.Service;
using MuxWatch.Service.Commands;

// muxwatch explain ... | muxwatch serve ... | muxwatch (serve, as the container and `dotnet run` start it)
switch (args)
{
    case ["explain", ..]:
        return await ExplainCommand.RunAsync(args[1..], Console.In, Console.Out, Console.Error);
    case ["-h" or "--help" or "help", ..]:
        Console.Out.WriteLine(CommandLine.Usage);
        return CommandLine.Read;
    case ["--version"]:
        Console.Out.WriteLine(CommandLine.Version);
        return CommandLine.Read;
    case ["serve", ..]:
        args = args[1..];
        break;
    case [var first, ..] when !first.StartsWith('-'):
        Console.Error.WriteLine($"muxwatch: unknown command '{first}'\n{CommandLine.Usage}");
        return CommandLine.BadUsage;
}

SidecarHosting.PrepareProcess();

// The content root is the app's folder, not the working directory: appsettings.json (port 9401, log
// levels) applies wherever the service is started from.
var builder = WebApplication.CreateBuilder(new WebApplicationOptions { Args = args, ContentRootPath = AppContext.BaseDirectory });
builder.AddMuxWatchSidecar();
return await StartupErrors.RunAsync(builder, app => app.MapMuxWatchSidecar());
