# syntax=docker/dockerfile:1
# The MuxWatch sidecar. Build from the repository root:  docker build -t muxwatch .
# Run:  docker run -p 9401:9401 -e MuxWatch__Targets__0__Name=cache -e MuxWatch__Targets__0__ConnectionString=redis:6379 muxwatch

FROM mcr.microsoft.com/dotnet/sdk:10.0 AS build
WORKDIR /src
# Restore as its own layer: it is re-run only when a project file or the central versions change.
COPY global.json Directory.Build.props Directory.Packages.props ./
COPY src/Directory.Build.props src/Directory.Build.targets src/
COPY src/MuxWatch/MuxWatch.csproj src/MuxWatch/
COPY src/MuxWatch.StackExchangeRedis/MuxWatch.StackExchangeRedis.csproj src/MuxWatch.StackExchangeRedis/
COPY src/MuxWatch.AspNetCore/MuxWatch.AspNetCore.csproj src/MuxWatch.AspNetCore/
COPY src/MuxWatch.Service/MuxWatch.Service.csproj src/MuxWatch.Service/
RUN dotnet restore src/MuxWatch.Service/MuxWatch.Service.csproj
COPY .editorconfig ./
COPY src/ src/
RUN dotnet publish src/MuxWatch.Service/MuxWatch.Service.csproj -c Release --no-restore -o /app

# Chiseled: no shell, no package manager, non-root by default.
FROM mcr.microsoft.com/dotnet/aspnet:10.0-noble-chiseled AS runtime
WORKDIR /app
COPY --from=build /app ./
USER $APP_UID
# Listen on every interface inside the container; configure everything else with MuxWatch__* variables.
ENV Urls=http://+:9401
EXPOSE 9401
ENTRYPOINT ["dotnet", "MuxWatch.Service.dll"]
